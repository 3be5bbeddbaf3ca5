/**
 * The configuration files the real SS14.Watchdog ships, loaded by ours:
 * - `appsettings.Development.yml` (a full example: Serilog with a theme and enrichers, `BaseUrl`, `Data.File`,
 *   `Process.PersistServers`, `Servers.InstanceRoot`, a Manifest instance) passes `watchdog check`;
 * - `appsettings.yml` as published (Serilog and `AllowedHosts` only, no `Servers`): the real watchdog runs with
 *   no instance at all; ours refuses it (exit 2, the key named).
 */
import { execFile } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { freePort, ROOT, tempDir } from '../_support/env.ts';
import { difference, PEER_SRC, peerProgram, peerSuite, startReal } from './_support/peer.ts';

const run = promisify(execFile);

async function check(config: string, cwd: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/watchdog'), 'check', '--config', config], {
      cwd,
      timeout: 20_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const test = peerSuite<{ dir: string; cleanup: () => Promise<void> }>(
  "peer :: the real watchdog's own configuration files in ours",
  { dir: '', cleanup: async () => {} },
);

test.before(async (ctx) => {
  const tmp = await tempDir('wd-peer-upstream-');
  ctx.dir = tmp.path;
  ctx.cleanup = tmp.cleanup;
});

test.after(async (ctx) => ctx.cleanup());

test('upstream :: appsettings.Development.yml passes `watchdog check`, with its instance, update type and timeout', async (ctx) => {
  const { code, out } = await check(join(PEER_SRC, 'SS14.Watchdog/appsettings.Development.yml'), ctx.dir);
  assert.is(code, 0, out);
  assert.match(out, 'configuration is valid');
  assert.match(out, 'syndicate_mothership ("Syndicate Mothership")');
  assert.match(out, 'update type: Manifest');
  assert.match(out, 'timeout:     90 s');
  assert.match(out, join(ctx.dir, 'bin/instances/syndicate_mothership'), 'Servers.InstanceRoot bound');
});

test('upstream :: the published appsettings.yml (no Servers): the real watchdog runs with no instance, ours refuses it', async (ctx) => {
  // The published copy: the build's patch took Serilog.Sinks.Loki out of Serilog.Using (see bench/peers).
  const published = join(dirname(await peerProgram()), 'appsettings.yml');
  await copyFile(published, join(ctx.dir, 'appsettings.yml'));
  const port = await freePort();
  const real = await startReal(ctx.dir, `http://127.0.0.1:${port}`, { ASPNETCORE_URLS: `http://127.0.0.1:${port}` });
  try {
    const res = await fetch(`http://127.0.0.1:${port}/instances/main/restart`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('main:x').toString('base64')}` },
    });
    assert.is(res.status, 404, 'the real watchdog: no instance');
  } finally {
    assert.is(await real.stop(), 0);
  }
  const { code, out } = await check(join(ctx.dir, 'appsettings.yml'), ctx.dir);
  assert.is(code, 2, out);
  assert.match(out, 'Servers: expected a map with Instances, got nothing');
  difference(
    'a configuration without Servers.Instances: the real watchdog starts and watches nothing; ours refuses it (exit 2, the key named)',
  );
});

test.run();
