/** The instance statechart's context and the pure logic on it: intents, back-off, how an exit counts and is told. */
import type {
  AlertKind,
  ExitInfo,
  ExitIntent,
  ExitReason,
  Hold,
  InstanceEmitted,
  InstanceEvent,
  InstanceTiming,
  LastExit,
  LaunchBlock,
  MaintenancePolicy,
  MaintenanceRules,
  PendingAction,
  RestartReason,
  Stamp,
} from './instance.types.ts';

/** The maintenance region's context (instance.maintenance-plan.ts has the logic). */
export interface MaintenanceContext {
  pending: PendingAction | null;
  hold: Hold | null;
  /** The last maintenance event's stamp, or when a timer of the region ran out. */
  now: Stamp;
  /** The policy `update?when=` gives the build its check finds; null: `Maintenance.When`. */
  updateWhen: MaintenancePolicy | null;
  /** Who asked for that check; '' for a schedule or the daemon's own. */
  updateBy: string;
  rules: MaintenanceRules;
}

export interface InstanceContext {
  key: string;
  timing: InstanceTiming;
  revision: string | null;
  /** Incremented per launch (and adoption); events from an older launch are ignored. */
  launchId: number;
  /** The check-in secret of the current launch; null while no server is owned. */
  secret: string | null;
  pid: number | null;
  checkedIn: boolean;
  startupFailures: number;
  restarts: number;
  /** Unclean exits and hang kills after a check-in since a stable run; ≥ 2 is a crash (or hang) loop. */
  crashStreak: number;
  /** How many of the `crashStreak` failures were hangs: only the first hang of a loop is told and dumped. */
  loopHangs: number;
  /** Run the update actor before the next launch. True at daemon start. */
  updatePending: boolean;
  /** Who asked for the check that found the waiting build; '' when nobody did. */
  updateBy: string;
  /** Who asked for the last STOP, and when ('' when unknown). */
  stop: { by: string; at: string };
  /** A back-off ran out and `decide` retries a launch nobody asked for; cleared on leaving `decide`. */
  retrying: boolean;
  rollbackWithData: boolean;
  restoreFrom: string | null;
  /** Why the server is going away; read and spent by `decide`. */
  exitIntent: ExitIntent | null;
  lastExit: LastExit | null;
  /** The current blocked-launch episode; it never touches `startupFailures`. */
  blocked: LaunchBlock | null;
  maintenance: MaintenanceContext;
}

/**
 * Plus the events regions raise for each other: STABLE (a run lasted `stableRunMs`), UPDATE_FOUND, SERVER_GONE and
 * LAUNCHED (for maintenance), RESUMED (a restart, rollback, restore or start ends an operator's stop).
 */
export type InstanceMachineEvent =
  | InstanceEvent
  | { type: 'STABLE' }
  | { type: 'UPDATE_FOUND'; when: MaintenancePolicy | null; by: string; at: Stamp }
  | { type: 'SERVER_GONE' }
  | { type: 'LAUNCHED' }
  | { type: 'RESUMED' };

const RANK: Record<ExitIntent, number> = {
  crash: 0,
  hang: 1,
  stop: 2,
  restart: 2,
  rollback: 2,
  restore: 2,
  shutdown: 3,
};

/** The intent after a request: the daemon's shutdown beats everything, a person's request beats a hang kill. */
export function want(current: ExitIntent | null, next: ExitIntent): ExitIntent {
  return current !== null && RANK[current] > RANK[next] ? current : next;
}

/** Before relaunch `crashStreak` (≥ 2; a blocked launch: `attempts + 1`): doubling from the initial delay, capped. */
export function backoffMs(timing: InstanceTiming, crashStreak: number): number {
  return Math.min(timing.backoffInitialMs * 2 ** Math.max(0, crashStreak - 2), timing.backoffMaxMs);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The alert as emitted: exit status (none for a hang: the kill was ours), the count that matters for its kind. */
export function alertOf(
  context: InstanceContext,
  kind: AlertKind,
  backoff: number | null = null,
): Extract<InstanceEmitted, { type: 'alert' }> {
  const last = context.lastExit;
  return {
    type: 'alert',
    kind,
    exit:
      kind === 'hang' || kind === 'hang-loop' || last === null
        ? null
        : { code: last.code, signal: last.signal, ...limitOf(last) },
    detail: kind === 'hang' || kind === 'hang-loop' ? null : (last?.detail ?? null),
    failures:
      kind === 'crash' || kind === 'crash-loop' || kind === 'hang-loop' ? context.crashStreak : context.startupFailures,
    backoffMs: backoff,
  };
}

const limitOf = (e: { memoryLimitMB?: number }) =>
  e.memoryLimitMB === undefined ? {} : { memoryLimitMB: e.memoryLimitMB };

export const atMemoryLimit = (mb: number): string => `killed at its memory limit of ${mb} MB`;

export const unclean = (exit: ExitInfo | null): boolean => exit !== null && (exit.code !== 0 || exit.signal !== null);

/** A loop's first hang is told and dumped; later ones, before a check-in too (a starved host), only killed. */
export const firstHang = (c: InstanceContext): boolean => c.loopHangs === 0 && (c.checkedIn || c.startupFailures === 0);

/** An exit nobody asked for, before a first check-in, that reaches the limit while no new build could help. */
export const givesUp = (c: InstanceContext): boolean =>
  !c.checkedIn && !c.updatePending && c.startupFailures >= c.timing.startupFailureLimit;

/** A relaunch nobody asked for (crash, back-off, blocked retry); not at the startup-failure limit: a build may help. */
export const unaskedRelaunch = (c: InstanceContext): boolean =>
  (c.exitIntent === 'crash' || c.retrying) && c.startupFailures < c.timing.startupFailureLimit;

function exitReason(c: InstanceContext, exit: ExitInfo): ExitReason {
  if (exit.failure !== undefined) return 'launch-failed';
  switch (c.exitIntent) {
    case 'shutdown':
    case 'stop':
    case 'restart':
    case 'hang':
      return c.exitIntent;
    case 'rollback':
    case 'restore':
      return 'restart';
    default:
      if (exit.memoryLimitMB !== undefined && unclean(exit)) return 'memory-limit';
      return c.updatePending && !unclean(exit) ? 'update' : 'crash';
  }
}

/**
 * How an exit counts and is told, decided once: unasked exits and hang kills become intent `crash` for `decide`.
 * `leftForRestart`: the server was asked to leave at its round end for a restart.
 */
export function classifyExit(
  context: InstanceContext,
  exit: ExitInfo,
  leftForRestart = false,
): { context: InstanceContext; emitted: InstanceEmitted[] } {
  // A clean exit of a server asked to leave for a restart is that restart.
  const asked = leftForRestart && context.exitIntent === null && !unclean(exit);
  const before: InstanceContext = asked ? { ...context, exitIntent: 'restart' } : context;
  const reason = exitReason(before, exit);
  // The server's last words explain an exit nobody asked for; after a requested one they are its goodbye.
  const limit = reason === 'memory-limit' ? limitOf(exit) : {};
  const said = reason === 'memory-limit' ? atMemoryLimit(exit.memoryLimitMB ?? 0) : null;
  const detail = exit.failure ?? said ?? (reason === 'crash' && unclean(exit) ? (exit.lastLine ?? null) : null);
  const c: InstanceContext = {
    ...before,
    lastExit: { code: exit.code, signal: exit.signal, reason, detail, ...limit },
  };
  const emitted: InstanceEmitted[] = [];
  const restart = (reason: RestartReason) => {
    c.restarts += 1;
    emitted.push({ type: 'restart', reason });
  };
  const hang = c.exitIntent === 'hang';
  switch (c.exitIntent) {
    case 'shutdown':
      break;
    case 'stop':
      emitted.push({ ...alertOf(c, 'stopped'), by: c.stop.by });
      break;
    case 'restart':
    case 'rollback':
    case 'restore':
      restart('request');
      break;
    default:
      c.exitIntent = 'crash';
      if (!c.checkedIn) {
        c.startupFailures += 1;
        if (givesUp(c)) emitted.push(alertOf(c, 'failing'));
        // A launch that failed is tried again, but no server ran: not a restart (the counter counts runs).
        else if (reason !== 'launch-failed') restart(hang ? 'hang' : 'startup-failure');
      } else if (hang || unclean(exit)) {
        c.crashStreak += 1;
        if (hang) c.loopHangs += 1;
        restart(hang ? 'hang' : 'crash');
        if (c.crashStreak === 1 && !hang) emitted.push(alertOf(c, 'crash'));
        // One alert when it becomes a loop (a hang loop when every failure in it was a hang); a stable run (STABLE)
        // resets the streak and so the loop.
        else if (c.crashStreak === 2) {
          emitted.push(
            alertOf(c, c.loopHangs === c.crashStreak ? 'hang-loop' : 'crash-loop', backoffMs(c.timing, c.crashStreak)),
          );
        }
      } else restart(c.updatePending ? 'update' : 'exit');
  }
  return { context: c, emitted };
}

/** The second unclean exit or hang kill after check-ins without a stable run between them, or a later one. */
export const inLoop = (c: InstanceContext): boolean =>
  c.exitIntent === 'crash' &&
  c.checkedIn &&
  c.crashStreak >= 2 &&
  (c.lastExit?.reason === 'hang' || unclean(c.lastExit));

export const exitOf = (event: InstanceMachineEvent): ExitInfo => {
  if (event.type !== 'PROCESS_EXITED') return { code: null, signal: null };
  const { type: _type, launchId: _launchId, ...exit } = event;
  return exit;
};
