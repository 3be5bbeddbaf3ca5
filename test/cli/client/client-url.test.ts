import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientUrlFromUrls, DEFAULT_URL, normaliseUrl } from '../../../src/cli/client/target.ts';

const test = suite('clientUrlFromUrls :: listen address to client address');

const url = (urls: string) => {
  const r = clientUrlFromUrls(urls);
  if ('problem' in r) throw new Error(`unexpected problem: ${r.problem}`);
  return r.url;
};
const problem = (urls: string) => {
  const r = clientUrlFromUrls(urls);
  if ('url' in r) throw new Error(`expected a problem, got ${r.url}`);
  return r.problem;
};

// Listen addresses and the client address each becomes, by rule.
const MAPPED: Record<string, Array<[urls: string, client: string]>> = {
  'wildcard hosts become localhost, the port is kept': [
    ['http://*:5000', 'http://localhost:5000'],
    ['http://+:8080', 'http://localhost:8080'],
    ['http://0.0.0.0:1212', 'http://localhost:1212'],
    ['http://[::]:7000', 'http://localhost:7000'],
  ],
  'a concrete host stays as it is; trailing slash dropped; scheme kept': [
    ['http://127.0.0.1:5001/', 'http://127.0.0.1:5001'],
    ['https://watchdog.example:443', 'https://watchdog.example:443'],
    ['http://localhost', 'http://localhost'],
    ['http://[::1]:5000', 'http://[::1]:5000'],
    ['HTTP://LOCALHOST:5000', 'http://LOCALHOST:5000'],
  ],
  'of several addresses separated by ";" the first is used': [
    [' http://*:5000 ; https://*:5001', 'http://localhost:5000'],
    [';http://127.0.0.1:6000', 'http://127.0.0.1:6000'],
  ],
};
for (const [title, cases] of Object.entries(MAPPED)) {
  test(`client-url :: ${title}`, () => {
    for (const [urls, client] of cases) assert.is(url(urls), client);
  });
}

test('client-url :: port 0 cannot be reached by a client, and says to use --url', () => {
  assert.match(problem('http://127.0.0.1:0'), /port 0.*--url/);
});

test('client-url :: junk is a problem naming what was found', () => {
  assert.match(problem('localhost:5000'), /"localhost:5000"/);
  assert.match(problem('ftp://x:21'), /ftp:\/\/x:21/);
  assert.match(problem('  '), /empty/);
});

test('client-url :: default and --url normalisation', () => {
  assert.is(DEFAULT_URL, 'http://localhost:5000');
  assert.is(normaliseUrl('http://127.0.0.1:9/'), 'http://127.0.0.1:9');
  assert.is(normaliseUrl('http://127.0.0.1:9'), 'http://127.0.0.1:9');
});

test.run();
