/** The statechart's contract with src/supervisor, which provides its actors. Types only. */

/** `wall` (epoch ms) is shown and kept; deadlines and holds run on `mono`, so a wall-clock step moves none. */
export interface Stamp {
  wall: number;
  mono: number;
}

/** The moments a maintenance action may wait for (`Maintenance.When`, a request's `when`). */
export const MAINTENANCE_POLICIES = ['Now', 'RoundEnd', 'Empty'] as const;
export type MaintenancePolicy = (typeof MAINTENANCE_POLICIES)[number];

export interface MaintenanceRules {
  when: MaintenancePolicy;
  /** A pending action is forced (a graceful shutdown) this long after it began or a hold ended. */
  maxDelayMs: number;
  /** How often `When: Empty` reads the player count. */
  pollMs: number;
}

/** Only `schedule` and `update` wait for a hold: a person who names a moment (`?when=`) means it. */
export type PendingSource = 'schedule' | 'update' | 'request';

/** As data.json keeps it (wall times). */
export interface SavedPending {
  action: 'restart' | 'update';
  source: PendingSource;
  when: MaintenancePolicy;
  since: number;
  /** Forced then: MaxDelayMinutes after it began or a hold ended. */
  deadline: number;
  maxDelayMs: number;
  /** Why the daemon itself asked (a memory limit passed); told with the pending notice. */
  reason?: string;
  /** A restore: the backup the restart puts back. */
  restore?: string;
  by?: string;
}

/** `due`: `deadline` on the monotonic clock. */
export interface PendingAction extends SavedPending {
  due: number;
}

/** A hold as data.json keeps it (wall times). */
export interface SavedHold {
  since: number;
  until: number;
  reason: string;
}

/** `ends`: `until` on the monotonic clock. */
export interface Hold extends SavedHold {
  ends: number;
}

/** For the next daemon. `asked`: told to leave at its round end; `carried`: shutdown asked; `forced`: by deadline. */
export interface SavedMaintenance {
  pending: (SavedPending & { asked: boolean; carried: boolean; forced: boolean }) | null;
  hold: SavedHold | null;
}

export type MaintenanceOutcome = 'done' | 'forced' | 'released' | 'expired' | 'dropped';
export type MaintenanceKind = 'scheduled-restart' | 'restart' | 'update' | 'hold';

/** `TimeoutSeconds` and `Timing.*`, in ms. */
export interface InstanceTiming {
  /** No check-in for this long (since launch or the last check-in) is a hang. */
  checkinTimeoutMs: number;
  /** The second relaunch of a crash loop waits this, doubling up to the cap. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A run this long after its first check-in ends a crash loop. */
  stableRunMs: number;
  /** Exits before a first check-in that make the instance give up (`stopped.failing`). */
  startupFailureLimit: number;
}

export interface InstanceInput {
  key: string;
  timing: InstanceTiming;
  revision: string | null;
  maintenance?: MaintenanceRules;
  /** An operator's stop data.json remembers: it starts in `operatorStop.stopped`. */
  stop?: { by: string; at: string } | null;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** No server ran: why the launch failed. */
  failure?: string;
  /** The server's last output line: often why it ended (`EADDRINUSE`). */
  lastLine?: string;
  /** Killed by the kernel at `Limits.MemoryMB`. */
  memoryLimitMB?: number;
}

/**
 * Why the last server ended (status API): `crash` is an exit nobody asked for (`memory-limit` at the hard limit),
 * `hang` a kill after missed check-ins, `update` a clean exit while one was pending; the rest were asked for.
 */
export type ExitReason =
  | 'crash'
  | 'memory-limit'
  | 'hang'
  | 'stop'
  | 'restart'
  | 'update'
  | 'shutdown'
  | 'launch-failed';

export interface LastExit extends Pick<ExitInfo, 'code' | 'signal' | 'memoryLimitMB'> {
  reason: ExitReason;
  /** The launch error, or the server's last line after an exit nobody asked for. */
  detail: string | null;
}

/** Why the server is going: `crash` was not asked for; of two requests the stronger wins (`want`). */
export type ExitIntent = 'crash' | 'hang' | 'stop' | 'restart' | 'rollback' | 'restore' | 'shutdown';

export type InstanceEvent =
  /** Daemon start: check for an update, then launch. */
  | { type: 'START' }
  /** Daemon start with PersistServers: watch a verified live server of the previous daemon. */
  | { type: 'ADOPT'; pid: number }
  | { type: 'RESTART' }
  /** Stop and stay stopped (`operatorStop`); `by`: `by boss from 10.0.0.5`, `at`: ISO time. */
  | { type: 'STOP'; by?: string; at?: string }
  /** `when`: a build it finds is carried out with that policy (`POST /update?when=`), not `Maintenance.When`. */
  | { type: 'UPDATE_CHECK'; when?: MaintenancePolicy; by?: string }
  /** Swap `bin.prev` back and relaunch on it; `withData`: and the data snapshot taken before that build came. */
  | { type: 'ROLLBACK'; withData?: boolean }
  /** Put the data snapshot `id` back and relaunch. */
  | { type: 'RESTORE'; id: string }
  | { type: 'CHECKIN'; launchId: number }
  /** The secret before the spawn (a fast server checks in early), then again with the pid. */
  | { type: 'PROCESS_STARTED'; launchId: number; secret: string; pid: number | null }
  | ({ type: 'PROCESS_EXITED'; launchId: number } & ExitInfo)
  /** No process ran, through no fault of the server's (descriptors, memory, a held port): retried, not counted. */
  | { type: 'PROCESS_BLOCKED'; launchId: number; kind: LaunchBlockKind; message: string }
  /** The daemon is exiting: persist=true detaches from the server, false shuts it down gracefully. */
  | { type: 'SHUTDOWN'; persist: boolean }
  | { type: 'CONFIG'; timing: InstanceTiming; maintenance?: MaintenanceRules }
  /** A restart at a moment: `request` (`?when=`, never held, at once without a server) or a `schedule` fire. */
  | {
      type: 'MAINTAIN';
      source: 'schedule' | 'request';
      when?: MaintenancePolicy;
      reason?: string;
      /** A restore at that moment: the backup it puts back. */
      restore?: string;
      by?: string;
      at: Stamp;
    }
  /** Holds scheduled restarts and update installs for `ms` (a new hold replaces the end of one that stands). */
  | { type: 'HOLD'; ms: number; reason: string; at: Stamp }
  | { type: 'RELEASE_HOLD'; at: Stamp }
  /** The plan the previous daemon left; a pending action outlives it only with an adopted server. */
  | { type: 'RESTORE_MAINTENANCE'; saved: SavedMaintenance; adopted: boolean; at: Stamp };

/** The daemon's resources (EMFILE, ENFILE, EAGAIN, ENOMEM) or a game port still held. */
export type LaunchBlockKind = 'resources' | 'port';

/** From the first blocked launch to the next launch that spawns (or a stop). */
export interface LaunchBlock {
  kind: LaunchBlockKind;
  /** What blocked the last attempt. */
  message: string;
  attempts: number;
}

export type AlertKind = 'crash' | 'crash-loop' | 'hang' | 'hang-loop' | 'failing' | 'stopped';
export type RestartReason = 'crash' | 'hang' | 'request' | 'update' | 'startup-failure' | 'exit';

/** The supervisor bridges these onto the bus. */
export type InstanceEmitted =
  | {
      type: 'alert';
      kind: AlertKind;
      exit: ExitInfo | null;
      detail: string | null;
      failures: number;
      backoffMs: number | null;
      /** A `stopped` alert: who asked for the stop ('' when unknown). */
      by?: string;
    }
  | { type: 'restart'; reason: RestartReason }
  | { type: 'launch'; launchId: number }
  | { type: 'checkin'; launchId: number }
  | { type: 'update-failed'; message: string }
  | { type: 'check-failed'; message: string }
  | { type: 'update-checked'; available: boolean }
  | { type: 'rolled-back'; revision: string | null }
  | { type: 'maintenance-pending'; pending: PendingAction; kind: Exclude<MaintenanceKind, 'hold'> }
  | { type: 'hold-began'; hold: Hold }
  | { type: 'maintenance-done'; kind: MaintenanceKind; how: MaintenanceOutcome }
  | { type: 'maintenance-step'; step: 'ask-leave' | 'restart'; forced: boolean }
  | { type: 'rollback-failed'; message: string }
  | { type: 'restored'; id: string; saved: string }
  | { type: 'restore-failed'; id: string; message: string }
  /** `attempts` 1 starts an episode. */
  | { type: 'launch-blocked'; kind: LaunchBlockKind; message: string; attempts: number; retryMs: number }
  | { type: 'launch-unblocked'; kind: LaunchBlockKind; attempts: number };

/** To the `process` child; once the server is going, a later STOP_GRACEFULLY, LEAVE or NOTIFY_UPDATE is moot. */
export type ProcessCommand =
  /** Graceful shutdown: POST /shutdown, wait for the exit, then kill the process group. */
  | { type: 'STOP_GRACEFULLY'; reason: string }
  /** POST /update so the game leaves at a convenient moment; if undeliverable, STOP_GRACEFULLY. */
  | { type: 'LEAVE' }
  /** POST /update; a delivery failure is only logged. */
  | { type: 'NOTIFY_UPDATE' }
  /** Dump if configured and `dump` (a loop's first hang), then kill the process group. */
  | { type: 'KILL'; reason: 'hang'; dump: boolean }
  /** PersistServers: forget the process without killing it. */
  | { type: 'DETACH' };

export type ProcessEvent = Extract<InstanceEvent, { type: 'PROCESS_STARTED' | 'PROCESS_EXITED' | 'PROCESS_BLOCKED' }>;

export interface UpdateOutput {
  revision: string | null;
  /** A new build was installed. */
  changed: boolean;
}

export interface CheckOutput {
  available: boolean;
  /** When the answer came: a found update's maintenance deadline counts from it. */
  at: Stamp;
}

export type RollbackOutput = { revision: string | null };

/** `saved`: the `before-restore` snapshot of the data that was replaced. */
export type RestoreOutput = { saved: string };
