/**
 * The instance statechart's context and the pure logic on it (intents, back-off; exits and alerts in
 * instance.exits.ts). No XState here: `instance.guards.ts` and the `instance.*-actions.ts` files turn these into
 * guards and actions.
 */

import type { MaintenancePolicy } from './instance.maintenance.types.ts';
import type { MaintenanceContext } from './instance.maintenance-plan.ts';
import type { ExitIntent, InstanceEvent, InstanceTiming, LastExit, LaunchBlock } from './instance.types.ts';

export interface InstanceContext {
  key: string;
  timing: InstanceTiming;
  revision: string | null;
  /** Incremented per launch (and adoption); events from an older launch carry an older id and are ignored. */
  launchId: number;
  /** The check-in secret of the current launch; null while no server is owned. Read by the HTTP layer. */
  secret: string | null;
  pid: number | null;
  /** The current launch has checked in at least once. */
  checkedIn: boolean;
  /** Consecutive exits before a first check-in. */
  startupFailures: number;
  restarts: number;
  /**
   * Consecutive unclean exits and hang kills after a check-in, reset by a stable run (STABLE); ≥ 2 is a crash (or
   * hang) loop.
   */
  crashStreak: number;
  /** How many of the `crashStreak` failures were hangs (reset with it): only the first hang of a loop is told and dumped. */
  loopHangs: number;
  /** Run the update actor before the next launch. True at daemon start. */
  updatePending: boolean;
  /** Who asked for the last STOP ('' when unknown): the stopped alert names them. */
  stopBy: string;
  /**
   * `decide` was entered to retry a launch nobody asked for: a crash loop's or a blocked launch's back-off ran out.
   * Set by those timers, cleared on leaving `decide`; never true at rest.
   */
  retrying: boolean;
  /** The last ROLLBACK asked for the matching data snapshot too. */
  rollbackWithData: boolean;
  /** The snapshot the last RESTORE asked for; read when `restoring` is entered. */
  restoreFrom: string | null;
  /** Why the server is going away; read and spent by `decide`. */
  exitIntent: ExitIntent | null;
  /** How and why the last server process ended (the supervisor stamps the time). */
  lastExit: LastExit | null;
  /** The current blocked-launch episode, or null; it never touches `startupFailures`. */
  blocked: LaunchBlock | null;
  /** The maintenance region's pending action and hold (instance.maintenance-plan.ts). */
  maintenance: MaintenanceContext;
}

/**
 * InstanceEvent plus the machine's own, raised by one region for the others: the delayed STABLE (a run lasted
 * `stableRunMs` after its first check-in); UPDATE_FOUND when a check finds a build (`when`: the policy the check was
 * asked with, `at`: when it answered); SERVER_GONE when the current server exited and LAUNCHED when one was launched,
 * for the maintenance region.
 */
export type InstanceMachineEvent =
  | InstanceEvent
  | { type: 'STABLE' }
  | { type: 'UPDATE_FOUND'; when: MaintenancePolicy | null; at: number }
  | { type: 'SERVER_GONE' }
  | { type: 'LAUNCHED' };

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

/** The crash-loop back-off before relaunch number `crashStreak` (≥ 2): doubling from the initial delay, capped. */
export function backoffMs(timing: InstanceTiming, crashStreak: number): number {
  return Math.min(timing.backoffInitialMs * 2 ** Math.max(0, crashStreak - 2), timing.backoffMaxMs);
}

/** The wait before retrying blocked launch number `attempts` (≥ 1): the initial back-off, doubling, capped. */
export function blockedBackoffMs(timing: InstanceTiming, attempts: number): number {
  return Math.min(timing.backoffInitialMs * 2 ** Math.max(0, attempts - 1), timing.backoffMaxMs);
}

/** The message of a rejected actor, for the emitted `*-failed` facts. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
