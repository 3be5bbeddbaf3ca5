import { existsSync } from 'node:fs';
import { readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { runCli } from '../_support/cli.ts';
import { contractArgv } from '../_support/config.ts';
import { waitFor } from '../_support/env.ts';
import { launchSecret } from '../e2e/resilience/_support/daemon-crash.ts';
import {
  ENGINE_CHECKIN_SECONDS,
  type EngineInstance,
  engineConfig,
  engineSuite,
  gone,
  ping,
  procState,
  running,
  serverLog,
  servesAfterUpdate,
  TOKEN,
} from './_support/engine.ts';

/**
 * The real engine (Robust.Server) under the real daemon, through the scenarios of the fake-engine e2e suites: the
 * launch contract as the engine sees it, check-in, `watchdog probe`, restart, crash, stop, hang and the daemon's
 * SIGTERM. One daemon runs two engines: `life` takes the requests one after another while `hang`, frozen early,
 * waits out its TimeoutSeconds (the engine checks in every 15 s, fixed, so TimeoutSeconds must be above that).
 */

/**
 * The hang instance's TimeoutSeconds: above the engine's fixed 15 s check-in period, and above its start on a busy
 * machine (a start slower than TimeoutSeconds is killed as a startup hang, again and again: seen with 20 s).
 */
const HANG_TIMEOUT_S = ENGINE_CHECKIN_SECONDS + 15;

interface Ctx {
  program: string;
  life: EngineInstance;
  /**
   * The hang engine's pid, when it was frozen, the moment its pid was gone (0: never) and its last check-in (ms) the
   * daemon counted, followed until then.
   */
  frozen: { pid: number; at: number; killed: Promise<number>; seen: { lastCheckin: number } };
}

const test = engineSuite<Ctx>('engine :: lifecycle of the real engine', {
  ctx: {} as Ctx,
  config: async (ctx) => {
    const { yaml, engines, program } = await engineConfig(ctx.dir, [
      // An extra Argument after the contract's own: the engine's last --cvar wins over config.toml's hostname.
      { key: 'life', args: ['--cvar', 'game.hostname=Engine Life'] },
      { key: 'hang', timeoutSeconds: HANG_TIMEOUT_S },
    ]);
    ctx.program = program;
    ctx.life = engines.life!;
    return yaml;
  },
});

test('lifecycle :: both engines start, check in and are running', async (ctx) => {
  const d = ctx.daemon!;
  for (const key of ['life', 'hang']) {
    const s = await running(d, key);
    ctx.pids.add(s.pid!);
    assert.ok(s.lastCheckinAt && !Number.isNaN(Date.parse(s.lastCheckinAt)), `${key}: lastCheckinAt is a time`);
    assert.is(s.startupFailures, 0);
    assert.match(await serverLog(ctx.dir, key), /Server Version 289\.0\.0\.0 -> Ready/);
  }
});

test('lifecycle :: hang: the engine is frozen (SIGSTOP) right after it has checked in', async (ctx) => {
  const d = ctx.daemon!;
  const s = await running(d, 'hang');
  process.kill(s.pid!, 'SIGSTOP');
  const at = Date.now();
  await waitFor('the engine to be stopped (state T)', () => procState(s.pid!) === 'T', 5000, 5);
  // Watched from now on while the other tests run: the moment the pid is gone (or a zombie) is the kill. A check-in
  // already on the wire when it froze may still land: the daemon's status is read until the kill, and its last
  // check-in of this pid is the one the timeout counts from.
  const seen = { lastCheckin: Date.parse(s.lastCheckinAt!) };
  const follow = async () => {
    const now = await d.status('hang', TOKEN).catch(() => null);
    if (now?.pid === s.pid && now.lastCheckinAt)
      seen.lastCheckin = Math.max(seen.lastCheckin, Date.parse(now.lastCheckinAt));
  };
  await follow();
  const killed = (async () => {
    let read = Date.now();
    for (const deadline = seen.lastCheckin + HANG_TIMEOUT_S * 1000 + 30_000; Date.now() < deadline; ) {
      if (gone(s.pid!)) return Date.now();
      if (Date.now() - read >= 500) {
        read = Date.now();
        await follow();
      }
      await new Promise((r) => setTimeout(r, 10)); // the watch's polling interval
    }
    return 0;
  })();
  ctx.frozen = { pid: s.pid!, at, killed, seen };
});

test('lifecycle :: launch: argv, working directory and environment as the engine sees them; its log shows the cvars', async (ctx) => {
  const d = ctx.daemon!;
  const s = await running(d, 'life');
  const dir = join(ctx.dir, 'instances', 'life');
  const argv = (await readFile(`/proc/${s.pid}/cmdline`, 'utf8')).split('\0').slice(0, -1);
  const baseUrl = `http://127.0.0.1:${new URL(d.url).port}`;
  assert.equal(argv, [ctx.program, ...contractArgv('life', baseUrl, dir), '--cvar', 'game.hostname=Engine Life']);
  assert.is(await readlink(`/proc/${s.pid}/cwd`), dir, 'the instance folder is the working directory');
  const secret = (await launchSecret(s.pid!)) ?? '';
  assert.is(Buffer.from(secret, 'base64').length, 64, 'the check-in secret: 64 random bytes, base64');
  assert.not.ok(argv.join(' ').includes(secret), 'the secret is never in argv');
  assert.not.ok(d.log().includes(secret), 'the secret is never logged');

  const log = await serverLog(ctx.dir, 'life');
  assert.match(log, /cfg: Configuration loaded from file/, 'the engine read --config-file');
  assert.match(log, /srv: Name: Engine Life/, 'the extra --cvar came after the contract and won over config.toml');
  assert.ok(existsSync(join(dir, 'data')), 'the engine made its --data-dir');
  assert.not.match(log, /Failed to send ping to watchdog/, 'every check-in was accepted');
});

test('lifecycle :: watchdog probe reads the engine’s /status and /info', async (ctx) => {
  const cli = await runCli(['probe', `127.0.0.1:${ctx.life.statusPort}`, '--json'], { cwd: ctx.dir });
  assert.is(cli.code, 0, cli.stderr);
  const probe = JSON.parse(cli.stdout) as { status: { name: string; players: number }; info: unknown };
  assert.is(probe.status.name, 'Engine Life');
  assert.is(probe.status.players, 0);
  assert.match(JSON.stringify(probe.info), /"version":"0\.0\.1"/);
  assert.match(await serverLog(ctx.dir, 'life'), /statushost\.http: GET \/info from/, 'the engine answered it');
});

test('lifecycle :: restart: /shutdown with a Reason, the engine leaves on its own, a new pid; the old secret is refused', async (ctx) => {
  const d = ctx.daemon!;
  const before = await running(d, 'life');
  const oldSecret = (await launchSecret(before.pid!))!;
  assert.is(await ping(d, 'life', oldSecret), 200);
  const from = d.log().length;
  assert.is(await d.control('life', TOKEN, 'restart'), 200);
  const after = await running(d, 'life', before.pid!);
  ctx.pids.add(after.pid!);
  assert.ok(gone(before.pid!), 'the old engine is gone');
  const log = await serverLog(ctx.dir, 'life');
  assert.match(log, /Restart requested by the watchdog, shutting down\.\.\.[\s\S]*root: Goodbye\./);
  assert.not.match(d.log().slice(from), /killing/, 'it left when asked, it was not killed');
  const newSecret = (await launchSecret(after.pid!))!;
  assert.is.not(newSecret, oldSecret);
  assert.is(await ping(d, 'life', oldSecret), 401);
  assert.is(await ping(d, 'life', newSecret), 200);
});

test('lifecycle :: crash (SIGKILL): relaunched with a new pid, running again', async (ctx) => {
  const d = ctx.daemon!;
  const before = await running(d, 'life');
  process.kill(before.pid!, 'SIGKILL');
  const after = await running(d, 'life', before.pid!);
  ctx.pids.add(after.pid!);
  assert.match(await serverLog(ctx.dir, 'life'), new RegExp(`server \\(pid ${before.pid}\\) killed by signal SIGKILL`));
});

test('lifecycle :: stop: the engine acknowledges /update but has no round to end, so it stays; a restart ends it and relaunches', async (ctx) => {
  const d = ctx.daemon!;
  const before = await running(d, 'life');
  const from = d.log().length;
  const engineFrom = (await serverLog(ctx.dir, 'life')).length;
  assert.is(await d.control('life', TOKEN, 'stop'), 200);
  await waitFor('the stop request to be recorded', async () => (await d.status('life', TOKEN)).stopRequested, 10_000);
  await servesAfterUpdate(ctx.dir, 'life', ctx.life.statusPort, engineFrom);
  const s = await d.status('life', TOKEN);
  assert.is(s.state, 'server.running', 'the daemon waits for the engine to leave, as the real watchdog does');
  assert.is(s.pid, before.pid);
  assert.not.ok(gone(before.pid!), 'the engine is still there');
  assert.match(
    (await serverLog(ctx.dir, 'life')).slice(engineFrom),
    /statushost\.http: POST \/update from 127\.0\.0\.1/,
  );
  assert.is(await d.control('life', TOKEN, 'restart'), 200);
  const back = await running(d, 'life', before.pid!);
  ctx.pids.add(back.pid!);
  // Checked once the restart is over: a refusal is logged as the answer comes, a timeout ShutdownRequestSeconds later.
  assert.not.match(d.log().slice(from), /not delivered|did not accept|killing/i, 'POST /update answered 2xx, no kill');
  assert.ok(gone(before.pid!), 'the old engine is gone');
  const engine = (await serverLog(ctx.dir, 'life')).slice(engineFrom);
  assert.match(engine, /Restart requested by the watchdog, shutting down\.\.\.[\s\S]*root: Goodbye\./);
  assert.is((await d.status('life', TOKEN)).stopRequested, false);
});

test(`lifecycle :: hang: killed ${HANG_TIMEOUT_S} s after its last check-in, not before, and relaunched`, async (ctx) => {
  const d = ctx.daemon!;
  const { pid, at } = ctx.frozen;
  const timeoutMs = HANG_TIMEOUT_S * 1000;
  const killedAt = await ctx.frozen.killed;
  const { lastCheckin } = ctx.frozen.seen;
  assert.ok(killedAt > 0, 'the frozen engine was never killed');
  assert.ok(killedAt - lastCheckin >= timeoutMs - 10, `killed ${killedAt - lastCheckin} ms after its last check-in`);
  assert.ok(killedAt >= at, 'killed after it was frozen');
  const next = await running(d, 'hang', pid);
  ctx.pids.add(next.pid!);
  assert.match(d.log(), /timed out/);
  assert.ok(killedAt - lastCheckin <= timeoutMs + 10_000, `killed ${killedAt - lastCheckin} ms after, long past it`);
  assert.match(await serverLog(ctx.dir, 'hang'), new RegExp(`server \\(pid ${pid}\\) killed by signal SIGKILL`));
});

test('lifecycle :: daemon SIGTERM: each engine gets /shutdown, runs its shutdown sequence and exits; the daemon exits 0', async (ctx) => {
  const d = ctx.daemon!;
  const pids = await Promise.all(['life', 'hang'].map(async (k) => (await running(d, k)).pid!));
  const from = d.log().length;
  assert.is(await d.stop(60_000), 0, 'the daemon exit code');
  for (const pid of pids) assert.ok(gone(pid), `engine ${pid} left running`);
  for (const key of ['life', 'hang']) {
    const log = await serverLog(ctx.dir, key);
    const last = log.slice(log.lastIndexOf('Server -> Starting'));
    assert.match(last, /Watchdog stopping, shutting down\.\.\.[\s\S]*root: Goodbye\./, `${key} shut down cleanly`);
  }
  assert.not.match(d.log().slice(from), /killing/, 'no engine was killed');
});

test.run();
