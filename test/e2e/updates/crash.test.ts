import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type RunningDaemon, reported, startDaemon } from '../../_support/daemon.ts';
import { waitFor } from '../../_support/env.ts';
import { manifestDoc } from '../../fixtures/builds/build.ts';
import { alive, builtLabel, dataJson, instanceDir, runningBuild, scratchLeft, TOKEN } from '../_support/updates.ts';
import { crash } from '../resilience/_support/daemon-crash.ts';
import { type CrashBuilds, crashBuilds, extractionUnderWay } from './_support/crash-builds.ts';

/**
 * The daemon SIGKILLed in the middle of an update, then started again in the same
 * folder: the interrupted download or extraction is cleaned away, bin/ holds a whole build, and the instance runs.
 * Manifest checks download and extract ahead (install/staged-build.ts), so the kill lands while build A still runs.
 */

const KEY = 'c';
const MANIFEST = '/fork/test/manifest';

interface Ctx extends CrashBuilds {
  d?: RunningDaemon;
}

const test = suite<Ctx>('e2e updates :: daemon killed mid-update', {} as Ctx);

test.before(
  reported(async (ctx) => {
    Object.assign(ctx, await crashBuilds('wd-e2e-crash-', MANIFEST, KEY));
    ctx.d = await startDaemon(ctx.yaml, { dir: ctx.wd });
  }),
);

test.after(async (ctx) => {
  await ctx.d?.stop();
  await ctx.cdn?.close();
  await ctx.cleanup?.();
});

const scratch = (ctx: Ctx) => join(ctx.root, 'wd', 'instances', KEY, '.update');

test('crash :: SIGKILL mid-download: at restart the partial download is gone, bin/ still holds A, A runs', async (ctx) => {
  let d = ctx.d!;
  const before = await runningBuild(d, KEY, ctx.port, 'A');
  // B's archive: announced in full, a third sent, the rest held back (a CDN that streams slowly).
  ctx.cdn.set('/files/B.zip', { kind: 'stall', file: ctx.b.path, sendBytes: Math.floor(ctx.b.size / 3) });
  ctx.cdn.set(MANIFEST, { kind: 'json', body: manifestDoc([ctx.a, ctx.bBuild]) });
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  const part = join(scratch(ctx), 'download.part');
  await waitFor('a partial download', async () => (await stat(part)).size >= Math.floor(ctx.b.size / 3), 15_000);
  await crash(d);
  assert.ok((await stat(part)).size < ctx.b.size, 'the kill left a partial download behind');

  // The CDN gives up on B; the restarted daemon has nothing to install.
  ctx.cdn.set(MANIFEST, { kind: 'json', body: manifestDoc([ctx.a]) });
  d = ctx.d = await startDaemon(ctx.yaml, { dir: ctx.wd });
  const after = await runningBuild(d, KEY, ctx.port, 'A', { notPid: before.status.pid });
  // The orphan either died on its own (its log pipe broke with the daemon) or was shut down by the new daemon.
  assert.match(
    d.log(),
    /shutting down a server left behind by a previous daemon|the server recorded in data\.json is gone/,
  );
  await waitFor('the orphaned server gone', () => !alive(before.status.pid!), 10_000);
  assert.equal(await scratchLeft(d, KEY), [], 'the partial download was cleaned away');
  assert.is(await builtLabel(d, KEY), 'A');
  assert.is((await dataJson(d, KEY)).revision, 'build-A');
  assert.is(after.status.revision, 'build-A');
});

test('crash :: SIGKILL mid-extract: at restart the half-extracted build is gone, then B installs completely and runs', async (ctx) => {
  let d = ctx.d!;
  const before = await runningBuild(d, KEY, ctx.port, 'A');
  ctx.cdn.set('/files/B.zip', { kind: 'file', file: ctx.b.path });
  ctx.cdn.set(MANIFEST, { kind: 'json', body: manifestDoc([ctx.a, ctx.bBuild]) });
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  const caught = await extractionUnderWay(scratch(ctx));
  await crash(d);
  // B has data.txt and 4,000 files in 40 folders (all made within its first 40 entries): partial means files missing.
  const left = (await readdir(join(scratch(ctx), caught, 'Resources'), { recursive: true })).filter((n) =>
    n.endsWith('.txt'),
  );
  assert.ok(left.length > 0 && left.length < 4001, `the kill left a partial staging folder behind (${left.length})`);
  assert.is(await builtLabel({ dir: ctx.wd }, KEY), 'A', 'bin/ untouched by the kill');

  d = ctx.d = await startDaemon(ctx.yaml, { dir: ctx.wd });
  // B is downloaded, extracted (4,000 entries, slow on a loaded machine) and installed first: a generous deadline.
  const after = await runningBuild(d, KEY, ctx.port, 'B', { notPid: before.status.pid, timeoutMs: 90_000 });
  await waitFor('the orphaned server gone', () => !alive(before.status.pid!), 10_000);
  assert.not.ok(
    await stat(join(scratch(ctx), caught)).then(
      () => true,
      () => false,
    ),
    'the half-extracted folder was cleaned away',
  );
  assert.equal(await scratchLeft(d, KEY), []);
  assert.is(await builtLabel(d, KEY), 'B');
  assert.is(await builtLabel(d, KEY, 'bin.prev'), 'A');
  const files = await readdir(join(instanceDir(d, KEY), 'bin', 'Resources'));
  assert.is(files.length, 40 + 1, 'the new build is complete (40 folders and data.txt)');
  assert.is((await dataJson(d, KEY)).revision, 'build-B');
  assert.is(after.status.revision, 'build-B');
});

test.run();
