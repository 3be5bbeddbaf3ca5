/**
 * What the instance statechart's actors take and give back (machines/instance.ts invokes them; src/supervisor
 * provides them with `.provide()`). Types only.
 */
import type { InstanceEvent } from './instance.types.ts';

/**
 * Commands the machine sends to its `process` child (the runProcess actor) with sendTo. Once the server is being
 * shut down or killed, a later STOP_GRACEFULLY, LEAVE or NOTIFY_UPDATE is ignored: a second request while it goes
 * changes only what the machine does after the exit.
 */
export type ProcessCommand =
  /** Graceful shutdown: POST /shutdown, wait for the exit, then kill the process group. */
  | { type: 'STOP_GRACEFULLY'; reason: string }
  /** Stop on request: POST /update so the game leaves at a convenient moment; if undeliverable, STOP_GRACEFULLY. */
  | { type: 'LEAVE' }
  /** An update is available: POST /update; a delivery failure is only logged. */
  | { type: 'NOTIFY_UPDATE' }
  /**
   * Hang: dump if configured and `dump` (the first hang of a loop only), then kill the process group.
   */
  | { type: 'KILL'; reason: 'hang'; dump: boolean }
  /** PersistServers: forget the process without killing it (the cleanup must not kill). */
  | { type: 'DETACH' };

/** Input of the `runProcess` callback actor, invoked as `process` by the `server` state for each launch. */
export interface ProcessInput {
  key: string;
  launchId: number;
  /** Set when adopting a server left by the previous daemon instead of spawning one. */
  adoptPid: number | null;
}

/** Events the runProcess actor sends back: PROCESS_STARTED, PROCESS_EXITED, PROCESS_BLOCKED. */
export type ProcessEvent = Extract<InstanceEvent, { type: 'PROCESS_STARTED' | 'PROCESS_EXITED' | 'PROCESS_BLOCKED' }>;

/** Input and output of the `update` promise actor (check, then apply when available). */
export interface UpdateInput {
  key: string;
  revision: string | null;
}
export interface UpdateOutput {
  revision: string | null;
  /** True when a new build was installed. */
  changed: boolean;
}

/** Input and output of the `checkUpdate` promise actor (spawned as child `updateCheck` on UPDATE_CHECK). */
export interface CheckInput {
  key: string;
  revision: string | null;
}
export interface CheckOutput {
  available: boolean;
  /** When the answer came (epoch ms): a found update's maintenance deadline counts from it. */
  at: number;
}

/** Input of the `readPlayers` promise actor (`When: Empty`): the player count, or null when the server gave none. */
export interface PlayersInput {
  key: string;
}

/** Commands to the `maintenanceSchedule` callback actor: the settings changed, compute the next fires again. */
export type ScheduleCommand = { type: 'RESCHEDULE' };

/** Input and output of the `rollback` promise actor: swaps `bin.prev` back; the revision now installed. */
export interface RollbackInput {
  key: string;
  /** Also restore the snapshot taken before the build being removed was installed. */
  withData: boolean;
}
export interface RollbackOutput {
  revision: string | null;
}

/**
 * Input and output of the `restore` promise actor: snapshots the current data (`before-restore`), then puts snapshot
 * `id` back; the safety snapshot's id.
 */
export interface RestoreInput {
  key: string;
  id: string;
}
export interface RestoreOutput {
  /** The `before-restore` snapshot of the data that was replaced. */
  saved: string;
}
