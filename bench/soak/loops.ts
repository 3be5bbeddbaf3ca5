import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAEMON_SETTLE_MS } from './bounds.ts';
import type { SoakContext } from './context.ts';
import { clockStep } from './faults-clock.ts';
import { control, controlBurst, controlSameMoment, heal } from './faults-control.ts';
import { endlessCdn, endlessHub } from './faults-endless.ts';
import { diskFull, endlessStatus, escapingHelper, fifoLog, logsRemoved } from './faults-env.ts';
import { descriptorPressure, requestFlood } from './faults-env-daemon.ts';
import { fifoConfig, fifoShared } from './faults-pipes.ts';
import { secondDaemon } from './faults-second-daemon.ts';
import { SERVER_FAULTS, type ServerFault, serverFault } from './faults-server.ts';
import {
  UPDATE_FAULTS,
  type UpdateFault,
  updateFault,
  WEBHOOK_FAULTS,
  type WebhookFault,
  webhookFault,
} from './faults-updates.ts';
import type { LagReference } from './lag-reference.ts';
import type { Plan } from './plan.ts';
import type { Setup } from './setup.ts';
import { check, type FaultKind } from './state.ts';
import { healthTick, logsTick } from './watch-env.ts';
import { scanTick } from './watch-procs.ts';
import { filesTick, firstInstallsDone, metricsTick, statusTick } from './watch-status.ts';
import { daemonKill, reload, startDaemon } from './world.ts';

/** The two loops of a run: the watcher (invariants, continuously) and the injector (faults, on the plan). */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Every delivered chat message is owed, by the loop rules, to a fault or a request on its instance: no flood. */
export function chatBounded(ctx: SoakContext, setup: Setup): void {
  for (const t of ctx.s.tracks.values()) {
    const got = setup.hook.delivered.get(t.key) ?? 0;
    check(
      ctx.s,
      'chat-bounded',
      got <= t.chatAllowance,
      () => `${t.key}: ${got} chat messages where its faults and requests allow ${t.chatAllowance}`,
    );
  }
}

/**
 * The invariants, checked every 500 ms, the daemon's status every second. By default until `endAt` (at most 30 s past
 * it while the fault loop finishes); `watching` replaces that rule (the smoke watches until its script is done), and
 * must be bounded too. `statusEveryTick`: the status every 500 ms (the smoke's five instances; the steps of its script
 * wait on what the status says).
 */
export async function watchLoop(
  ctx: SoakContext,
  setup: Setup,
  endAt: number,
  reference: LagReference,
  watching: () => boolean = () => Date.now() < endAt || (faultsRunning && Date.now() < endAt + 30_000),
  statusEveryTick = false,
): Promise<void> {
  let tick = 0;
  let lastStart: number | null = null;
  // The daemon's answers are awaited apart, one at a time each: a slow answer must not stall the /proc scans,
  // which time the relaunches.
  let status: Promise<void> | null = null;
  let metrics: Promise<void> | null = null;
  let health: Promise<void> | null = null;
  let revival: Promise<void> | null = null;
  // Bounded: one turn per 500 ms while `watching` (which has a deadline).
  while (watching()) {
    const at = Date.now();
    if (revival === null && daemonDied(ctx, setup)) {
      revival = startDaemon(ctx, setup.world).finally(() => {
        revival = null;
      });
    }
    scanTick(ctx.s);
    if (tick % 2 === 0) {
      filesTick(ctx.s, setup.known);
      logsTick(ctx.s);
      health ??= healthTick(ctx.s).finally(() => {
        health = null;
      });
    }
    if (tick % 2 === 0 || statusEveryTick) {
      status ??= statusTick(ctx.s).finally(() => {
        status = null;
      });
    }
    if (tick % 10 === 0 && metrics === null) {
      // The first scrape after a daemon start covers its start-up; lag is counted from the second on.
      const fresh = ctx.s.daemonReadyAt !== lastStart;
      lastStart = ctx.s.daemonReadyAt;
      metrics = metricsTick(ctx.s, !fresh, reference.read).finally(() => {
        metrics = null;
      });
      chatBounded(ctx, setup);
    }
    tick++;
    await sleep(500 - (Date.now() - at));
  }
  await Promise.all([status, metrics, health, revival]);
}

/**
 * The daemon exits only when the soak kills or stops it: an exit of its own (a crash) is a violation, reported with
 * the end of its log; a new daemon is started so the run goes on.
 */
function daemonDied(ctx: SoakContext, setup: Setup): boolean {
  const d = setup.world.daemon;
  if (d && !d.exited()) check(ctx.s, 'daemon-alive', true, () => '');
  if (!d?.exited() || ctx.s.daemonReadyAt === null) return false;
  ctx.s.daemonReadyAt = null;
  ctx.s.daemonPid = null;
  setup.world.daemon = null;
  let tail = '';
  try {
    tail = readFileSync(join(ctx.s.dir, 'daemon.log'), 'utf8').split('\n').slice(-16).join('\n');
  } catch {
    // No log to quote.
  }
  check(ctx.s, 'daemon-alive', false, () => `daemon ${d.pid} exited on its own; its log ends:\n${tail}`);
  return true;
}

/**
 * Environment faults that last seconds run beside the fault loop (it goes on injecting meanwhile), one of a kind at
 * a time; the loop awaits them before it ends.
 */
const background = new Map<FaultKind, Promise<unknown>>();

function inBackground(kind: FaultKind, run: () => Promise<unknown>): boolean {
  if (background.has(kind)) return false;
  background.set(
    kind,
    run().finally(() => background.delete(kind)),
  );
  return true;
}

/** Runs `run` (null: nothing injected) in the background as `kind`; one of a kind at a time. */
function started(kind: FaultKind, run: () => Promise<void> | null): boolean {
  if (background.has(kind)) return false;
  const running = run();
  if (running === null) return false;
  background.set(
    kind,
    running.finally(() => background.delete(kind)),
  );
  return true;
}

async function inject(ctx: SoakContext, setup: Setup, kind: FaultKind): Promise<boolean> {
  if ((SERVER_FAULTS as readonly string[]).includes(kind))
    return serverFault(ctx, kind as ServerFault, (key) => void control(ctx.s, key, 'restart'));
  // What goes through the daemon waits for one that answers (a restart may be under way).
  if (ctx.s.daemonReadyAt === null && !(kind in WEBHOOK_FAULTS)) return false;
  if (kind === 'disk-full') {
    if (setup.fs === null || background.has(kind)) return false;
    // Whether a server was free to make chatty is known at once; the hold goes on in the background.
    const hold = diskFull(ctx, setup.fs);
    if (hold === null) return false;
    background.set(
      kind,
      hold.finally(() => background.delete(kind)),
    );
    return true;
  }
  if (kind === 'logs-removed') return logsRemoved(ctx);
  if (kind === 'fifo-log') return fifoLog(ctx);
  if (kind === 'endless-status') return endlessStatus(ctx);
  if (kind === 'escaping-helper') return escapingHelper(ctx);
  if (kind === 'fifo-shared') return started(kind, () => fifoShared(ctx));
  if (kind === 'endless-hub') return started(kind, () => endlessHub(ctx, setup.cdn));
  if (kind === 'clock-step') return started(kind, () => clockStep(ctx));
  if (kind === 'endless-cdn') return endlessCdn(ctx, setup.cdn);
  // A second daemon must leave every server alone, which cannot be told while descriptor pressure kills one; a pipe
  // as a configuration layer would stop a second daemon (or a reload starved of descriptors) for its own reason: the
  // three daemon-wide faults take turns.
  const exclusive: FaultKind[] = ['descriptor-pressure', 'second-daemon', 'fifo-config'];
  if (exclusive.includes(kind) && exclusive.some((k) => background.has(k))) return false;
  if (kind === 'fifo-config') return started(kind, () => fifoConfig(ctx, setup.world));
  if (kind === 'request-flood') return inBackground(kind, () => requestFlood(ctx));
  if (kind === 'descriptor-pressure') return inBackground(kind, () => descriptorPressure(ctx));
  // Only once the daemon has settled: a fresh one is still replacing or adopting leftovers, which the check would
  // blame on the second daemon.
  const fresh = ctx.s.daemonReadyAt === null || Date.now() - ctx.s.daemonReadyAt < DAEMON_SETTLE_MS;
  if (kind === 'second-daemon') return !fresh && inBackground(kind, () => secondDaemon(ctx));
  // A reload the daemon cannot read its files for (EMFILE) is retried later by the daemon, while the soak's model
  // would take it as applied now: none while descriptor-pressure lasts.
  // Nor while a pipe stands as a configuration layer: the daemon rightly refuses that reload (fifo-config reloads
  // once the pipe is gone).
  if (kind === 'config-reload' && (Date.now() < ctx.s.starvedUntil || background.has('fifo-config'))) return false;
  if (kind === 'control-burst') await controlBurst(ctx);
  else if (kind === 'control-same-moment') await controlSameMoment(ctx);
  else if (kind === 'config-reload') reload(ctx, setup.world);
  else if (kind in UPDATE_FAULTS) await updateFault(ctx, setup.cdn, setup.pending, kind as UpdateFault);
  else if (kind in WEBHOOK_FAULTS) webhookFault(ctx, setup.hook, kind as WebhookFault);
  return true;
}

/** The daemon SIGKILLs and restarts, on their own schedule: other faults go on meanwhile, as they would. */
export async function daemonLoop(ctx: SoakContext, setup: Setup, plan: Plan): Promise<void> {
  for (const [n, due] of plan.daemonKills.entries()) {
    await sleep(ctx.s.startedAt + due.atMs - Date.now());
    // The Manifest instances' first build is installed before the first kill (bounded: 20 s), so bin/ is watched
    // whole through the kills; on a loaded machine a kill at every install would leave it never checked.
    for (let i = 0; n === 0 && i < 200 && !firstInstallsDone(ctx.s); i++) await sleep(100);
    // A daemon being revived after a crash is waited for (bounded), so no kill of the plan is skipped.
    for (let i = 0; i < 300 && !setup.world.daemon; i++) await sleep(100);
    // A second daemon still starting when the first is killed would rightly take the folder (the lock is free then),
    // and the restart below would be refused: the kill waits for that fault to end (it ends within its own bound).
    await background.get('second-daemon');
    // Nor while a pipe stands as a configuration layer: the next daemon could not read its configuration. Nor while
    // a clock step or an endless hub is watched: a daemon killed then would leave nothing to judge.
    await Promise.all((['fifo-config', 'clock-step', 'endless-hub'] as const).map((k) => background.get(k)));
    await daemonKill(ctx, setup.world, due.persist);
  }
}

export async function faultLoop(ctx: SoakContext, setup: Setup, plan: Plan, endAt: number): Promise<void> {
  // Let the first daemon bring its servers up before the first fault.
  await sleep(3000);
  const deferred: FaultKind[] = [];
  for (let n = 0; n < 100_000 && Date.now() < endAt - plan.quietMs; n++) {
    const at = Date.now();
    // A kind that cannot be injected now (no running instance free, the daemon restarting) is deferred and tried
    // first next turn; meanwhile the next kind of the plan is tried instead (at most three a turn).
    const tried = deferred.splice(0);
    for (let i = 0; i < 3; i++) {
      const kind: FaultKind = tried.shift() ?? plan.next();
      if (await inject(ctx, setup, kind)) break;
      deferred.push(kind);
    }
    deferred.push(...tried);
    if (n % 3 === 0) await heal(ctx, 4000);
    await sleep(plan.everyMs - (Date.now() - at));
  }
  await Promise.all(background.values());
  // A short run can excuse every relaunch (each fell in a daemon's start-up, or in descriptor pressure): one crash on
  // the settled daemon, once the faults are over, times one, as the first pass makes sure every kind is injected.
  // The watch loop goes on until this is done (faultsRunning).
  const timed = () => (ctx.s.checks.get('relaunch-within-bound') ?? 0) > 0;
  if (!timed()) {
    for (let i = 0; i < 20 && !(await inject(ctx, setup, 'sigkill-server')); i++) await sleep(250);
    for (let i = 0; i < 40 && !timed(); i++) await sleep(250);
  }
  faultsRunning = false;
}

/** Whether the fault loop still runs (past the run's end only for the relaunch it may add, bounded). */
let faultsRunning = true;
