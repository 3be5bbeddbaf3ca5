import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { runMain } from '../../_support/cli.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../../_support/env.ts';
import { type Cdn, startCdn } from '../../fixtures/archives/serve.ts';
import { type BuiltArchive, writeServerBuild } from '../../fixtures/builds/build.ts';
import {
  builtLabel,
  dataJson,
  instanceDir,
  logSince,
  type ManifestFeed,
  manifestConfig,
  manifestFeed,
  runningBuild,
  scratchLeft,
  TOKEN,
} from '../_support/updates.ts';
import { updateSettled } from './_support/update-settled.ts';

/**
 * UpdateType Manifest end to end: the real daemon installs build A from a loopback CDN at
 * start, moves to build B on `POST /instances/<key>/update`, and rolls back over HTTP and with `watchdog rollback`.
 * A is a zip, B a tar.gz: both formats go through the daemon.
 */

const KEY = 'm';

/** The CDN and the manifest it serves, build B (published by a test), and the instance's ApiPort. */
interface Cdned {
  cdn: Cdn;
  feed: ManifestFeed;
  b: BuiltArchive;
  port: number;
}

const test = daemonSuite<Cdned>('e2e updates :: manifest', {
  ctx: {} as Cdned,
  config: async (ctx) => {
    ctx.cdn = await startCdn();
    ctx.feed = manifestFeed(ctx.cdn, '/fork/test/manifest');
    const a = await writeServerBuild(join(ctx.dir, 'A.zip'), 'A');
    ctx.feed.publish('build-A', '2024-05-01T10:00:00Z', a, '/files/SS14.Server_linux-x64-A.zip');
    ctx.b = await writeServerBuild(join(ctx.dir, 'B.tar.gz'), 'B', { format: 'tar.gz' });
    ctx.port = await freePort();
    return manifestConfig(KEY, ctx.port, ctx.feed.url, 5);
  },
  after: (ctx) => ctx.cdn?.close(),
});

test('manifest :: installs build A before the first launch: bin/, data.json, status and the server agree', async (ctx) => {
  const { status, server } = await runningBuild(ctx.daemon!, KEY, ctx.port, 'A');
  assert.is(status.revision, 'build-A');
  assert.is((await dataJson(ctx.daemon!, KEY)).revision, 'build-A');
  assert.is(await builtLabel(ctx.daemon!, KEY), 'A');
  const launcher = await stat(join(instanceDir(ctx.daemon!, KEY), 'bin', 'Robust.Server'));
  assert.ok(launcher.mode & 0o100, 'the install set the execute bit the zip did not carry');
  assert.is(server.cwd, instanceDir(ctx.daemon!, KEY), 'the server runs in the instance folder');
  assert.equal(await scratchLeft(ctx.daemon!, KEY), [], 'no download or staging left behind');
  assert.match(ctx.daemon!.log(), /installing build from manifest.*revision=build-A/);
});

test('manifest :: the manifest gains B; POST /update: the server gets /update, leaves and comes back on B', async (ctx) => {
  const before = await runningBuild(ctx.daemon!, KEY, ctx.port, 'A');
  const from = ctx.daemon!.log().length;
  ctx.feed.publish('build-B', '2024-05-02T10:00:00Z', ctx.b, '/files/SS14.Server_linux-x64-B.tar.gz');

  assert.is(await ctx.daemon!.control(KEY, TOKEN, 'update'), 200);
  const after = await runningBuild(ctx.daemon!, KEY, ctx.port, 'B', { notPid: before.status.pid });
  // The old server left because it was asked to (its own log line, echoed by the daemon), not because it was killed.
  assert.match(logSince(ctx.daemon!, from), /build A: update requested/);
  assert.not.match(logSince(ctx.daemon!, from), /Restart requested|SIGKILL/);
  assert.is(after.status.revision, 'build-B');
  const data = await dataJson(ctx.daemon!, KEY);
  assert.is(data.revision, 'build-B');
  assert.is(data.previousRevision, 'build-A');
  assert.is(await builtLabel(ctx.daemon!, KEY), 'B');
  assert.is(await builtLabel(ctx.daemon!, KEY, 'bin.prev'), 'A');
  assert.equal(await scratchLeft(ctx.daemon!, KEY), []);
  // Progress reached the bus (the metrics collector adds up the download facts) and the log, with the real size.
  const size = (await stat(ctx.b.path)).size;
  assert.match(logSince(ctx.daemon!, from), new RegExp(`downloaded and extracted server archive .*bytes=${size}`));
  const metrics = await (await fetch(`${ctx.daemon!.url}/metrics`)).text();
  assert.match(metrics, new RegExp(`^watchdog_update_bytes\\{instance="${KEY}"\\} ${size}$`, 'm'));
  assert.match(metrics, new RegExp(`^watchdog_updates_total\\{instance="${KEY}",result="done"\\} [1-9]`, 'm'));
});

test('manifest :: POST /rollback: back on A (server restarted); data.json says build-A, bin.prev holds B', async (ctx) => {
  const before = await runningBuild(ctx.daemon!, KEY, ctx.port, 'B');
  assert.is(await ctx.daemon!.control(KEY, TOKEN, 'rollback'), 200);
  await runningBuild(ctx.daemon!, KEY, ctx.port, 'A', { notPid: before.status.pid });
  assert.is(await builtLabel(ctx.daemon!, KEY), 'A');
  assert.is(await builtLabel(ctx.daemon!, KEY, 'bin.prev'), 'B');
  const data = await dataJson(ctx.daemon!, KEY);
  assert.is(data.revision, 'build-A');
  assert.is(data.previousRevision, 'build-B');
  assert.match(ctx.daemon!.log(), /rolled back to the previous build.*revision=build-A/);
});

test('manifest :: after POST /rollback the status names the build that runs (build-A)', async (ctx) => {
  await runningBuild(ctx.daemon!, KEY, ctx.port, 'A');
  assert.is((await dataJson(ctx.daemon!, KEY)).revision, 'build-A');
  assert.is(
    (await ctx.daemon!.status(KEY, TOKEN)).revision,
    'build-A',
    'GET /instances/m/status revision after rollback',
  );
});

test('manifest :: watchdog rollback <key> --url --token: swaps again (B), server restarted', async (ctx) => {
  const before = await runningBuild(ctx.daemon!, KEY, ctx.port, 'A');
  const cli = await runMain(['rollback', KEY, '--url', ctx.daemon!.url, '--token', TOKEN], { cwd: ROOT });
  assert.is(cli.code, 0, cli.stderr);
  const { stdout } = cli;
  assert.match(stdout, /rollback requested for m/);
  await runningBuild(ctx.daemon!, KEY, ctx.port, 'B', { notPid: before.status.pid });
  assert.is(await builtLabel(ctx.daemon!, KEY, 'bin.prev'), 'A');
  assert.is((await dataJson(ctx.daemon!, KEY)).revision, 'build-B');
});

test('manifest :: update again with nothing new: no restart, the server stays', async (ctx) => {
  const before = await runningBuild(ctx.daemon!, KEY, ctx.port, 'B');
  const from = ctx.daemon!.log().length;
  assert.is(await ctx.daemon!.control(KEY, TOKEN, 'update'), 200);
  await waitFor(
    'the check to finish',
    () => /no update available|update available/.test(logSince(ctx.daemon!, from)),
    10_000,
  );
  assert.match(logSince(ctx.daemon!, from), /no update available/);
  const s = await updateSettled(ctx.daemon!, KEY, Date.now());
  assert.is(s.pid, before.status.pid);
  assert.is(s.state, 'server.running');
});

test.run();
