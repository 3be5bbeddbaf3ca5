/**
 * Safe defaults said out loud (src/config/exposure.ts): a weak or example token on an address beyond this machine
 * is a warning for `check` and a refusal for `start` (unless --allow-weak-tokens); an engine server with
 * TimeoutSeconds under 30 is a warning. Through the loader, and through the real `bin/watchdog`.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { EXAMPLE_TOKENS } from '../../src/config/exposure.ts';
import { loadConfig } from '../../src/config/load.ts';
import { runCli, runMain } from '../_support/cli.ts';
import { ROOT, tempSuite, waitFor } from '../_support/env.ts';
import { oneInstance, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: exposed tokens and engine timeouts', { prefix: 'wd-exposure-' });
const LONG = 'f3b1c2d4e5a6978812345678';
const T = 'appsettings.yml: Servers.Instances.alpha';

async function load(dir: string, instance: string[], urls: string, exposedTokens?: 'refuse' | 'warn') {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(instance, [`Urls: "${urls}"`]) });
  return loadConfig({ cwd: dir, env: {}, exposedTokens });
}

test('exposure :: check: a short or example token beyond loopback is a warning naming the key, never the token', async ({
  dir,
}) => {
  const cases: Array<[string, string]> = [
    ['demo-token-change-me', 'is the example from the documentation'],
    ['please-CHANGEME-now-0123456789', 'is the example from the documentation'],
    ['short-token-15c', 'is shorter than 16 characters'],
  ];
  for (const [token, why] of cases) {
    const r = await load(dir, [`ApiToken: ${token}`], 'http://*:5000');
    assert.ok(r.ok, token);
    if (!r.ok) continue;
    const lines = r.warnings.filter((w) => w.includes('ApiToken'));
    assert.equal(lines.length, 1, token);
    assert.match(
      lines[0] ?? '',
      `${T}.ApiToken: the token ${why} and Urls listens beyond this machine (http://*:5000)`,
    );
    assert.match(lines[0] ?? '', 'watchdog start will refuse it without --allow-weak-tokens');
    assert.not.match(lines.join('\n'), token, 'the token is never printed');
  }
});

test('exposure :: no finding on loopback only, or with a long token, or for a token file that is long enough', async ({
  dir,
}) => {
  for (const urls of ['http://localhost:5000', 'http://127.0.0.1:5000', 'http://[::1]:5000']) {
    const r = await load(dir, ['ApiToken: t'], urls, 'refuse');
    assert.ok(r.ok && !r.warnings.some((w) => w.includes('ApiToken')), urls);
  }
  const long = await load(dir, [`ApiToken: ${LONG}`], 'http://0.0.0.0:5000', 'refuse');
  assert.ok(long.ok && !long.warnings.some((w) => w.includes('ApiToken')));
  await writeFile(join(dir, 'token.txt'), `${LONG}\n`);
  const file = await load(dir, ['ApiTokenFile: token.txt'], 'http://10.1.2.3:5000', 'refuse');
  assert.ok(file.ok, file.ok ? '' : file.problems.join('\n'));
});

test('exposure :: start: the same finding is a problem, naming ApiTokenFile when the token came from a file', async ({
  dir,
}) => {
  await writeFile(join(dir, 'token.txt'), 'abc\n');
  const r = await load(dir, ['ApiTokenFile: token.txt'], 'http://localhost:5000;http://*:6000', 'refuse');
  assert.equal(r.ok ? [] : r.problems, [
    `${T}.ApiTokenFile: the token is shorter than 16 characters and Urls listens beyond this machine (http://*:6000): watchdog start refuses it; set a long random token (openssl rand -hex 24), listen on localhost, or start with --allow-weak-tokens`,
  ]);
});

test('exposure :: an engine server with TimeoutSeconds under 30 is a warning; another program is not', async ({
  dir,
}) => {
  const urls = 'http://localhost:5000';
  const engine = await load(dir, [`ApiToken: ${LONG}`, 'TimeoutSeconds: 20'], urls);
  assert.equal(engine.ok ? engine.warnings.filter((w) => w.includes('TimeoutSeconds')) : ['refused'], [
    `${T}.TimeoutSeconds: 20 is under 30: the engine checks in every 15 s, so the instance would be reported late (server.awaiting-checkin) between ordinary check-ins; use 30 or more (the default is 90)`,
  ]);
  const named = await load(
    dir,
    [`ApiToken: ${LONG}`, 'TimeoutSeconds: 15', 'RunCommand: /opt/ss14/Robust.Server'],
    urls,
  );
  assert.match(named.ok ? named.warnings.join('\n') : '', '15 is under 30');
  assert.match(named.ok ? named.warnings.join('\n') : '', 'and killed as hung');
  for (const lines of [
    [`ApiToken: ${LONG}`, 'TimeoutSeconds: 30'],
    [`ApiToken: ${LONG}`, 'TimeoutSeconds: 5', 'RunCommand: bin/my-server'],
  ]) {
    const r = await load(dir, lines, urls);
    assert.ok(r.ok && !r.warnings.some((w) => w.includes('TimeoutSeconds')), lines.join(' '));
  }
});

test('exposure :: every token shipped in this repository is known as an example', async () => {
  const files = ['appsettings.yml', 'deploy/kubernetes/secret.yaml', 'README.md', 'docs/production.md'];
  for (const file of files) {
    const text = await readFile(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/ApiToken["']?\s*[:=]\s*["']?([A-Za-z0-9._-]{6,})/g)) {
      const token = m[1] ?? '';
      assert.ok(EXAMPLE_TOKENS.has(token) || /change[-_ ]?me/i.test(token), `${file}: ${token}`);
    }
  }
});

test('exposure :: bin/watchdog: start refuses the shipped config on *:0 (exit 2), check warns, --allow-weak-tokens starts', async ({
  dir,
}) => {
  const config = join(ROOT, 'appsettings.yml');
  const refused = await runCli(['start', '--config', config, '--urls', 'http://*:0'], { cwd: dir, timeoutMs: 30_000 });
  assert.is(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, 'Servers.Instances.demo.ApiToken: the token is the example from the documentation');
  assert.not.match(refused.stderr + refused.stdout, 'demo-token-change-me');
  const checked = await runMain(['check', '--config', config, '--urls', 'http://*:0'], { cwd: dir });
  assert.is(checked.code, 0, checked.stderr);
  assert.match(checked.stdout + checked.stderr, 'watchdog start will refuse it without --allow-weak-tokens');
  // The override: the daemon starts and listens on every interface (stopped by pid once it says so).
  const daemon = spawn(
    process.execPath,
    [join(ROOT, 'bin/watchdog'), 'start', '--config', config, '--urls', 'http://*:0', '--allow-weak-tokens'],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  daemon.stdout.on('data', (d: Buffer) => (out += d.toString()));
  daemon.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => daemon.once('close', (code) => resolve(code)));
  try {
    await waitFor('the daemon to listen', () => /listening on http:\/\/\S+:\d+/.test(out), 20_000);
  } finally {
    if (daemon.pid !== undefined) process.kill(daemon.pid, 'SIGTERM');
  }
  assert.is(await exited, 0, out);
  assert.match(out, 'Servers.Instances.demo.ApiToken: the token is the example from the documentation');
  assert.not.match(out, 'demo-token-change-me');
});

test.run();
