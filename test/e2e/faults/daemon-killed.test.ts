import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import * as rs from '../resilience/_support/daemon-crash.ts';

/**
 * PersistServers: true (servers outlive the daemon; the next one verifies and reattaches them). The tests share
 * one instance folder and run in order: each daemon adopts what the previous one left running.
 */
interface Ctx {
  dir: string;
  yaml: string;
  unrelated: ReturnType<typeof rs.startSleep> | null;
  daemons: RunningDaemon[];
  /** Every server pid seen, for cleanup: with PersistServers the last daemon leaves them running. */
  servers: Set<number>;
  cleanup: () => Promise<void>;
  /** The daemon of the current step. */
  d: RunningDaemon | null;
  pids: Record<string, number>;
}

const test = suite<Ctx>('e2e :: faults: the daemon killed with PersistServers on', {
  dir: '',
  yaml: '',
  unrelated: null,
  daemons: [],
  servers: new Set(),
  cleanup: async () => {},
  d: null,
  pids: {},
});

const TOKEN = 'tok';
const TIMEOUT_S = 3;
const KEYS = ['a', 'b'] as const;

async function start(ctx: Ctx): Promise<RunningDaemon> {
  const d = await startDaemon(ctx.yaml, { dir: ctx.dir });
  ctx.daemons.push(d);
  ctx.d = d;
  return d;
}

async function runningPids(
  ctx: Ctx,
  what: string,
  pred: (key: string, pid: number) => boolean,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const key of KEYS) {
    const s = await rs.waitStatus(ctx.d!, key, TOKEN, what, (st) => rs.running(st) && pred(key, st.pid!));
    out[key] = s.pid!;
    ctx.servers.add(s.pid!);
  }
  return out;
}

test.before(async (ctx) => {
  const tmp = await tempDir('wd-persist-');
  ctx.dir = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.unrelated = rs.startSleep();
  const [pa, pb, urls] = [await freePort(), await freePort(), await freePort()];
  const env = '      EnvironmentVariables: { TICK_MS: "200", FIXTURE_LIFETIME_MS: "120000" }';
  ctx.yaml = rs.fixedUrls(
    testConfig({
      persist: true,
      instances: KEYS.map((key, i) => ({
        key,
        port: [pa, pb][i]!,
        runCommand: fixture('echo-env.mjs'),
        timeoutSeconds: TIMEOUT_S,
        extra: env,
      })),
    }),
    urls,
  );
  // a's data.json names a pid that now belongs to an unrelated process (with a start time it does not have).
  const aDir = join(ctx.dir, 'instances/a');
  await mkdir(aDir, { recursive: true });
  await writeFile(join(aDir, 'data.json'), rs.bogusLaunchRecord(ctx.unrelated.pid, aDir));
});

test.after(async (ctx) => {
  for (const d of ctx.daemons) await d.stop();
  for (const pid of ctx.servers) rs.killGroup(pid);
  ctx.unrelated?.proc.kill('SIGKILL');
  await ctx.cleanup();
});

test('daemon-killed :: a pid recorded in data.json that now belongs to an unrelated process is neither adopted nor killed', async (ctx) => {
  const d = await start(ctx);
  ctx.pids = await runningPids(ctx, 'server.running', () => true);
  const unrelated = ctx.unrelated!.pid;
  assert.is.not(ctx.pids.a, unrelated, 'a launched its own server');
  assert.ok(rs.isAlive(unrelated), 'the unrelated process was not killed');
  assert.match(
    d.log(),
    /\[watchdog:a\] the server recorded in data\.json is gone \(or its pid was reused\); nothing to adopt/,
  );
  assert.is(rs.logLines(d, /\[watchdog:a\] server launched/).length, 1);
});

test('daemon-killed :: SIGKILLed while servers run, restarted: the same pids are adopted, nothing is launched twice, check-ins are accepted', async (ctx) => {
  const first = ctx.pids;
  const logOf = (key: string) => join(ctx.dir, 'instances', key, 'logs', 'server.log');
  await rs.crash(ctx.d!);
  const from = Object.fromEntries(await Promise.all(KEYS.map(async (k) => [k, await rs.sizeOf(logOf(k))] as const)));
  // Each server tries to check in with nobody there, and goes on: it outlived the daemon.
  for (const key of KEYS) await rs.pingFailedSince(logOf(key), from[key]!);
  for (const key of KEYS) assert.ok(rs.isAlive(first[key]!), `${key} survives the SIGKILLed daemon`);

  const d = await start(ctx);
  assert.equal(await runningPids(ctx, 'adopted', (key, pid) => pid === first[key]), first, 'same pids');
  const adoptedAt = Date.now();
  assert.is(rs.logLines(d, /adopted the server left running by the previous daemon/).length, 2);
  assert.is(rs.logLines(d, /server launched/).length, 0, 'no duplicate launched');
  for (const key of KEYS) {
    assert.equal(
      await rs.pidsWith(join(ctx.dir, 'instances', key, 'config.toml')),
      [first[key]],
      `exactly one ${key} server`,
    );
  }
  // The restored secret authenticates their check-ins, for longer than a whole TimeoutSeconds.
  for (const key of KEYS) {
    const s = await rs.checkedInPastTimeout(d, key, TOKEN, adoptedAt, TIMEOUT_S);
    assert.is(s.state, 'server.running', `${key} still running after TimeoutSeconds`);
    assert.is(s.pid, first[key]);
    assert.is(s.restarts, 0);
  }
});

test('daemon-killed :: an adopted server keeps writing its log to logs/, and the daemon echoes it', async (ctx) => {
  const file = join(ctx.dir, 'instances/a/logs/server.log');
  const size = (await stat(file)).size;
  await waitFor('server.log to grow', async () => (await stat(file)).size > size, 5000);
  assert.ok(
    rs.logLines(ctx.d!, /\[watchdog:a:server\] tick \d+/).length > 0,
    'adopted server output echoed with its key',
  );
});

test('daemon-killed :: an adopted server that dies is relaunched like any other', async (ctx) => {
  const d = ctx.d!;
  rs.killGroup(ctx.pids.a);
  const relaunched = await rs.waitStatus(d, 'a', TOKEN, 'relaunched', (s) => rs.running(s) && s.pid !== ctx.pids.a);
  ctx.servers.add(relaunched.pid!);
  assert.is((await rs.statusOf(d, 'b', TOKEN)).pid, ctx.pids.b, 'b untouched');
  ctx.pids = { ...ctx.pids, a: relaunched.pid! };
});

test('daemon-killed :: SIGTERM leaves the servers running, and the next daemon adopts them', async (ctx) => {
  const left = ctx.pids;
  assert.is(await ctx.d!.stop(), 0, 'daemon exit code');
  for (const key of KEYS) assert.ok(rs.isAlive(left[key]!), `${key} survives SIGTERM`);
  const d = await start(ctx);
  assert.equal(await runningPids(ctx, 'adopted again', (key, pid) => pid === left[key]), left);
  assert.is(rs.logLines(d, /server launched/).length, 0);
});

test('daemon-killed :: the check-in timeout is armed for an adopted server: one that stops checking in is killed and relaunched', async (ctx) => {
  const hung = ctx.pids.b!;
  process.kill(hung, 'SIGSTOP');
  const after = await rs.waitStatus(
    ctx.d!,
    'b',
    TOKEN,
    'hang kill and relaunch',
    (s) => rs.running(s) && s.pid !== hung,
    20_000,
  );
  ctx.servers.add(after.pid!);
  await waitFor('the stopped server gone', () => !rs.isAlive(hung), 5000);
  assert.ok(rs.isAlive(ctx.unrelated!.pid), 'the unrelated process is still alive at the end');
});

test.run();
