import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientUrl, DEFAULT_URL, normaliseUrl } from '../../../src/cli/client/target.ts';
import { parseUrls } from '../../../src/config/listen.ts';

const test = suite('clientUrl :: listen address to client address');

/** The client address for the first address of a valid `Urls`, as the loader parses it. */
const url = (urls: string) => {
  const r = parseUrls(urls);
  if (!r.ok || !r.listen[0]) throw new Error(`unexpected problem: ${urls}`);
  return clientUrl(r.listen[0]);
};

// Listen addresses and the client address each becomes, by rule.
const MAPPED: Record<string, Array<[urls: string, client: string]>> = {
  'wildcard hosts become localhost, the port is kept': [
    ['http://*:5000', 'http://localhost:5000'],
    ['http://+:8080', 'http://localhost:8080'],
    ['http://0.0.0.0:1212', 'http://localhost:1212'],
    ['http://[::]:7000', 'http://localhost:7000'],
  ],
  'a concrete host stays as it is; trailing slash dropped': [
    ['http://127.0.0.1:5001/', 'http://127.0.0.1:5001'],
    ['http://watchdog.example:80', 'http://watchdog.example:80'],
    ['http://[::1]:5000', 'http://[::1]:5000'],
    ['http://LOCALHOST:5000', 'http://localhost:5000'],
  ],
  'of several addresses separated by ";" the first is used': [
    [' http://*:5000 ; http://*:5001', 'http://localhost:5000'],
    [';http://127.0.0.1:6000', 'http://127.0.0.1:6000'],
  ],
};
for (const [title, cases] of Object.entries(MAPPED)) {
  test(`client-url :: ${title}`, () => {
    for (const [urls, client] of cases) assert.is(url(urls), client);
  });
}

test('client-url :: default and --url normalisation', () => {
  assert.is(DEFAULT_URL, 'http://localhost:5000');
  assert.is(normaliseUrl('http://127.0.0.1:9/'), 'http://127.0.0.1:9');
  assert.is(normaliseUrl('http://127.0.0.1:9'), 'http://127.0.0.1:9');
});

test.run();
