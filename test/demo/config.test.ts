import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseBind, parseLinks, readDemoConfig, splitTags } from '../../src/demo/config.ts';
import { loadSettings } from '../../src/kit/settings.ts';
import type { Logger } from '../../src/log.ts';

function collect(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log: Logger = {
    debug: (m) => lines.push(m),
    info: (m) => lines.push(m),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
    child: () => log,
  };
  return { log, lines };
}

const test = suite('demo :: config from cvars');

const BINDS: Array<[string, { host: string; port: number }]> = [
  ['', { host: '127.0.0.1', port: 1212 }],
  ['127.0.0.1:5000', { host: '127.0.0.1', port: 5000 }],
  ['*:5000', { host: '0.0.0.0', port: 5000 }],
  ['[::1]:5000', { host: '::1', port: 5000 }],
  ['localhost', { host: 'localhost', port: 1212 }],
  [':7000', { host: '0.0.0.0', port: 7000 }],
];
for (const [raw, expected] of BINDS) {
  test(`config :: status.bind ${JSON.stringify(raw)} → ${expected.host} ${expected.port}`, () =>
    assert.equal(parseBind(raw, 1212), expected));
}
test('config :: a bad status.bind is a clear error', () => {
  assert.throws(() => parseBind('a:b:c', 1212), /status.bind "a:b:c" is not host:port/);
});

test('config :: hub.tags: comma list, trimmed, empties dropped', () => {
  assert.equal(splitTags('a, ,b,,c '), ['a', 'b', 'c']);
  assert.equal(splitTags(''), []);
});

test('config :: status.links: JSON array; bad entries skipped with a warning; bad JSON → none', () => {
  const { log, lines } = collect();
  assert.equal(
    parseLinks('[{"name":"W","icon":"wiki","url":"https://w"},{"name":1},{"name":"S","url":"https://s"}]', log),
    [
      { name: 'W', icon: 'wiki', url: 'https://w' },
      { name: 'S', url: 'https://s' },
    ],
  );
  assert.ok(lines.some((l) => l.startsWith('warn skipping')));
  assert.equal(parseLinks('not json', log), []);
  assert.equal(parseLinks('{"name":"x"}', log), []);
  assert.equal(parseLinks('', log), []);
});

test('config :: defaults and the engine spelling of auth.mode', () => {
  const { log } = collect();
  const d = readDemoConfig(loadSettings({ argv: [] }), log);
  assert.is(d.port, 1212);
  assert.is(d.statusPort, 1212);
  assert.is(d.statusHost, '127.0.0.1');
  assert.is(d.authMode, 'Required');
  assert.is(d.privacyPolicy, undefined, 'identifier and version unset → no privacy policy');
  assert.is(d.crashAfterSeconds, undefined);
  for (const [raw, mode] of [
    ['0', 'Optional'],
    ['2', 'Disabled'],
    ['disabled', 'Disabled'],
    ['Optional', 'Optional'],
  ] as const) {
    assert.is(readDemoConfig(loadSettings({ argv: ['--cvar', `auth.mode=${raw}`] }), log).authMode, mode);
  }
  const c = readDemoConfig(
    loadSettings({
      argv: [
        '--cvar',
        'net.port=4000',
        '--cvar',
        'demo.crash_after=1.5',
        '--cvar',
        'status.privacy_policy_identifier=i',
        '--cvar',
        'status.privacy_policy_version=1',
      ],
    }),
    log,
  );
  assert.is(c.statusPort, 4000);
  assert.is(c.crashAfterSeconds, 1.5);
  assert.equal(c.privacyPolicy, { link: 'https://example.com/privacy', identifier: 'i', version: '1' });
});
test.run();
