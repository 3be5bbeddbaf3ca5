/**
 * A counterexample of the Urls fuzz suite (urls.test.ts), kept as a plain test: `http://[::::]:5000` was accepted,
 * so `watchdog check` passed and the daemon failed only when it tried to listen. Brackets around anything but an
 * IPv6 address, and four numbers that are no IPv4 address, are configuration problems now.
 */
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from '../config/_support/files.ts';

const urls = tempSuite('fuzz/config Urls', { prefix: 'wd-fuzz-urls-' });

urls('config :: Urls with an address no listen() takes is refused, naming what is expected', async ({ dir }) => {
  const cases: Array<[string, string]> = [
    ['http://[::::]:5000', 'expected an IPv6 address inside [ ], such as http://[::1]:5000'],
    ['http://[1.2.3.4]:5000', 'expected an IPv6 address inside [ ], such as http://[::1]:5000'],
    [
      'http://localhost:5000;http://999.1.1.1:80',
      'expected an IPv4 address of four numbers 0-255, such as http://127.0.0.1:5000 (in "http://999.1.1.1:80")',
    ],
  ];
  for (const [value, expected] of cases) {
    await writeFiles(dir, { 'appsettings.yml': oneInstance([], [`Urls: "${value}"`]) });
    const r = await loadConfig({ cwd: dir, env: {} });
    assert.equal(r, { ok: false, problems: [`appsettings.yml: Urls: ${expected}, got ${JSON.stringify(value)}`] });
  }
});

urls('config :: IPv6 in brackets, IPv4, names and the keywords still load', async ({ dir }) => {
  const value = 'http://[::1]:0;http://127.0.0.1:0;http://localhost:0;http://*:0;http://example.com:0';
  await writeFiles(dir, { 'appsettings.yml': oneInstance([], [`Urls: "${value}"`]) });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) return assert.unreachable(r.problems.join('\n'));
  assert.equal(
    r.config.listen.map((a) => a.host),
    ['::1', '127.0.0.1', 'localhost', '*', 'example.com'],
  );
});

urls.run();
