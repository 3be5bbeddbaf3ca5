import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type RunningDaemon, reported, type StatusJson, startDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { manifestDoc } from '../../fixtures/builds/build.ts';
import {
  buildStatus,
  builtLabel,
  dataJson,
  instanceDir,
  runningBuild,
  scratchLeft,
  TOKEN,
} from '../_support/updates.ts';
import * as rs from '../resilience/_support/daemon-crash.ts';
import { type CrashBuilds, crashBuilds, extractionUnderWay } from './_support/crash-builds.ts';

/**
 * The daemon SIGKILLed in the middle of a Manifest update with `Process.PersistServers: true`, then started again
 * in the same folder with the same config. Manifest checks download and extract ahead while build A runs, so the
 * kill lands with A's server up; with PersistServers it must outlive the daemon, and the next daemon must adopt
 * that very server (same pid, check-ins accepted past TimeoutSeconds), launch no second one, leave bin/ and the
 * revision on A, and clear the interrupted download or extraction from `.update/`.
 *
 * The tests share one instance folder and run in order: each daemon adopts the server the previous one left.
 * Servers check in to the BaseUrl they were launched with, so `Urls` names a fixed port, as in
 * test/e2e/faults/daemon-killed.test.ts.
 */

const KEY = 'p';
const MANIFEST = '/fork/test/manifest';
/** `TimeoutSeconds` of updatesConfig. */
const TIMEOUT_S = 4;

interface Ctx extends CrashBuilds {
  /** Every daemon started, for the after hook. */
  daemons: RunningDaemon[];
  /** Every server pid seen: with PersistServers the daemons leave them running, so the after hook kills them. */
  servers: Set<number>;
  /** The pid of build A's server, launched by the first daemon and adopted by every later one. */
  pidA: number;
}

const test = suite<Ctx>('e2e updates :: daemon killed mid-update, PersistServers on', {
  daemons: [],
  servers: new Set(),
  pidA: 0,
  cleanup: async () => {},
} as unknown as Ctx);

const scratch = (ctx: Ctx) => join(ctx.wd, 'instances', KEY, '.update');
const configToml = (ctx: Ctx) => join(ctx.wd, 'instances', KEY, 'config.toml');

async function start(ctx: Ctx): Promise<RunningDaemon> {
  const d = await startDaemon(ctx.yaml, { dir: ctx.wd });
  ctx.daemons.push(d);
  return d;
}

/** The newest daemon (the one a test drives). */
const current = (ctx: Ctx) => ctx.daemons[ctx.daemons.length - 1]!;

test.before(
  reported(async (ctx) => {
    const urlsPort = await freePort();
    Object.assign(ctx, await crashBuilds('wd-e2e-crash-persist-', MANIFEST, KEY, { persistServers: true, urlsPort }));
    const d = await start(ctx);
    const { status } = await runningBuild(d, KEY, ctx.port, 'A');
    ctx.pidA = status.pid!;
    ctx.servers.add(ctx.pidA);
    assert.is(rs.logLines(d, /\[watchdog:p\] server launched/).length, 1, 'the first daemon launched build A once');
  }),
);

test.after(async (ctx) => {
  for (const d of ctx.daemons) await d.stop();
  // Also any server a failed run launched that no status showed: every one runs with this instance's config.toml.
  if (ctx.root) for (const pid of await rs.pidsWith(configToml(ctx))) ctx.servers.add(pid);
  for (const pid of ctx.servers) rs.killGroup(pid);
  await ctx.cdn?.close();
  await ctx.cleanup();
});

/** Polls the status, remembering every server pid it names (for the after hook). */
async function watchStatus(
  ctx: Ctx,
  d: RunningDaemon,
  what: string,
  pred: (s: StatusJson) => boolean,
  timeoutMs?: number,
): Promise<StatusJson> {
  return rs.waitStatus(
    d,
    KEY,
    TOKEN,
    what,
    (s) => {
      if (s.pid !== null) ctx.servers.add(s.pid);
      return pred(s);
    },
    timeoutMs,
  );
}

/** Once the daemon is SIGKILLed: build A's server tries to check in with nobody there, and goes on. */
async function outlives(ctx: Ctx): Promise<void> {
  const log = join(ctx.wd, 'instances', KEY, 'logs', 'server.log');
  await rs.pingFailedSince(log, await rs.sizeOf(log));
}

/**
 * Starts the next daemon in the same folder with the same config and checks it took over build A's server as it
 * was: adopted (not launched again), the only server of the instance, its check-ins accepted for longer than
 * TimeoutSeconds, bin/ and the revision still A, and nothing left in `.update/`.
 */
async function restartAndCheckAdopted(ctx: Ctx): Promise<void> {
  const previous = current(ctx);
  const d = await start(ctx);
  assert.is(d.url, previous.url, 'the daemon is back on the address its server checks in to');
  const adopted = await watchStatus(ctx, d, "build A's server adopted", rs.running, 20_000);
  const adoptedAt = Date.now();
  assert.is(adopted.pid, ctx.pidA, 'the server left running is adopted, not replaced');
  assert.is(rs.logLines(d, /\[watchdog:p\] adopted the server left running by the previous daemon/).length, 1);
  assert.is(rs.logLines(d, /server launched/).length, 0, 'no second server launched');
  assert.not.match(d.log(), /checks in to another address|shutting down a server left behind/);
  assert.equal(await rs.pidsWith(configToml(ctx)), [ctx.pidA], 'exactly one server of the instance runs');
  assert.is(adopted.revision, 'build-A');

  // Its check-ins reach the new daemon and are accepted, for longer than a whole TimeoutSeconds: check-ins keep
  // coming, and none of them was taken for a hang.
  const later = await rs.checkedInPastTimeout(d, KEY, TOKEN, adoptedAt, TIMEOUT_S);
  assert.is(later.state, 'server.running', 'still running after TimeoutSeconds');
  assert.is(later.pid, ctx.pidA);
  assert.is(later.restarts, 0);
  const server = await buildStatus(ctx.port);
  assert.equal([server.build, server.pid], ['A', ctx.pidA], "the game server answering is still build A's");
  assert.is(rs.logLines(d, /server launched/).length, 0, 'still no second server');
  assert.equal(await rs.pidsWith(configToml(ctx)), [ctx.pidA]);

  assert.equal(await scratchLeft(d, KEY), [], 'the interrupted download or extraction was cleaned away');
  assert.is(await builtLabel(d, KEY), 'A', 'bin/ still holds build A');
  assert.is(await builtLabel(d, KEY, 'bin.prev'), null, 'nothing was installed');
  assert.is((await dataJson(d, KEY)).revision, 'build-A');
  assert.is((await rs.statusOf(d, KEY, TOKEN)).revision, 'build-A');
}

test('crash-persist :: SIGKILL mid-download: the server keeps running, the next daemon adopts it, bin/ and the revision stay A', async (ctx) => {
  const d = current(ctx);
  assert.is((await rs.statusOf(d, KEY, TOKEN)).pid, ctx.pidA);
  // B's archive: announced in full, a third sent, the rest held back (a CDN that streams slowly). It stays
  // published and stalling: were the next daemon to resume the download on its own, `.update/` would show it.
  ctx.cdn.set('/files/B.zip', { kind: 'stall', file: ctx.b.path, sendBytes: Math.floor(ctx.b.size / 3) });
  ctx.cdn.set(MANIFEST, { kind: 'json', body: manifestDoc([ctx.a, ctx.bBuild]) });
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  const part = join(scratch(ctx), 'download.part');
  await waitFor('a partial download', async () => (await stat(part)).size >= Math.floor(ctx.b.size / 3), 15_000);
  // Manifest downloads ahead: A's server was not asked to leave.
  assert.is((await rs.statusOf(d, KEY, TOKEN)).pid, ctx.pidA);
  await rs.crash(d);
  assert.ok((await stat(part)).size < ctx.b.size, 'the kill left a partial download behind');
  await outlives(ctx);
  assert.ok(rs.isAlive(ctx.pidA), "build A's server survives the SIGKILLed daemon");
  assert.is(await builtLabel({ dir: ctx.wd }, KEY), 'A');

  await restartAndCheckAdopted(ctx);
});

test('crash-persist :: SIGKILL mid-extract: the server keeps running, the next daemon adopts it, the half-extracted build is gone', async (ctx) => {
  const d = current(ctx);
  ctx.cdn.set('/files/B.zip', { kind: 'file', file: ctx.b.path });
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  const caught = await extractionUnderWay(scratch(ctx));
  await rs.crash(d);
  // B has data.txt and 4,000 files in 40 folders (all made within its first 40 entries): partial means files missing.
  const left = (await readdir(join(scratch(ctx), caught, 'Resources'), { recursive: true })).filter((n) =>
    n.endsWith('.txt'),
  );
  assert.ok(left.length > 0 && left.length < 4001, `the kill left a partial staging folder behind (${left.length})`);
  await outlives(ctx);
  assert.ok(rs.isAlive(ctx.pidA), "build A's server survives the SIGKILLed daemon (it was not asked to leave)");
  assert.is(await builtLabel({ dir: ctx.wd }, KEY), 'A', 'bin/ untouched by the kill');

  await restartAndCheckAdopted(ctx);
  assert.not.ok(
    await stat(join(scratch(ctx), caught)).then(
      () => true,
      () => false,
    ),
    'the half-extracted folder was cleaned away',
  );
  const resources = await readdir(join(instanceDir(current(ctx), KEY), 'bin', 'Resources'));
  assert.equal(resources, ['data.txt'], "none of B's files reached bin/");
});

test.run();
