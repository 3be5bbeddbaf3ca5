/**
 * The contract between the instance statechart (pure) and src/supervisor, which provides its actors: input, events,
 * emitted facts, what the actors give back, and the maintenance plan. Types only.
 */

/**
 * A moment as the supervisor stamps its maintenance events. `wall` (epoch ms) is for what a person reads and what
 * data.json keeps; `mono` (the daemon's monotonic clock, ms) is what every deadline and hold is measured on, so a
 * step of the wall clock (NTP, a VM resume, `date -s`) neither ends a hold early nor forces a restart late.
 */
export interface Stamp {
  wall: number;
  mono: number;
}

/** `Maintenance.When`. */
export type MaintenancePolicy = 'Now' | 'RoundEnd' | 'Empty';

export interface MaintenanceRules {
  when: MaintenancePolicy;
  /** A pending action is forced (a graceful shutdown) this long after it began or a hold ended. */
  maxDelayMs: number;
  /** How often `When: Empty` reads the player count. */
  pollMs: number;
}

/**
 * What began a pending action: a `RestartSchedule` fire (`schedule`), a found update (`update`), or a person's
 * request with `?when=` (`request`). Only the first two wait for a hold: a person who names a moment means it.
 */
export type PendingSource = 'schedule' | 'update' | 'request';

/** A restart or update waiting for its moment, as data.json keeps it (wall times). */
export interface SavedPending {
  action: 'restart' | 'update';
  source: PendingSource;
  when: MaintenancePolicy;
  since: number;
  /** When it is forced (MaxDelayMinutes after it began or a hold ended). */
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

/**
 * The plan data.json keeps for the next daemon. `asked`: the server was told to leave at its round end; `carried`: its
 * shutdown was asked for; `forced`: by the deadline.
 */
export interface SavedMaintenance {
  pending: (SavedPending & { asked: boolean; carried: boolean; forced: boolean }) | null;
  hold: SavedHold | null;
}

export type MaintenanceOutcome = 'done' | 'forced' | 'released' | 'expired' | 'dropped';
export type MaintenanceKind = 'scheduled-restart' | 'restart' | 'update' | 'hold';

/** Every wait the machine makes, in milliseconds (`TimeoutSeconds`, `Timing.*`). */
export interface InstanceTiming {
  /** `TimeoutSeconds`: no check-in for this long (since launch or the last check-in) is a hang. */
  checkinTimeoutMs: number;
  /** Crash-loop back-off: the second relaunch waits this, doubling up to the cap. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A run this long after its first check-in ends a crash loop (back-off and loop notification reset). */
  stableRunMs: number;
  /** Consecutive exits before a first check-in that make the instance give up (`stopped.failing`). */
  startupFailureLimit: number;
}

export interface InstanceInput {
  key: string;
  timing: InstanceTiming;
  revision: string | null;
  maintenance?: MaintenanceRules;
  /** The operator's stop data.json remembers: the instance starts in `operatorStop.stopped`. */
  stop?: { by: string; at: string } | null;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** Set when no server ran: why the launch failed (`cannot launch bin/x: ENOENT … check RunCommand`). */
  failure?: string;
  /** The server's last line of output, when it wrote one: often the reason it ended (`EADDRINUSE`). */
  lastLine?: string;
  /** The kernel killed the launch at its hard memory limit (`Limits.MemoryMB`). */
  memoryLimitMB?: number;
}

/**
 * Why the last server process ended, as the status API shows it: an exit nobody asked for is a `crash` (clean or
 * not: the code tells; `memory-limit` when the kernel killed it at its hard limit), a kill after missed check-ins a
 * `hang`, a clean exit while an update was pending an `update`; the others were requested (a rollback's shutdown is a
 * `restart`). `launch-failed`: no server ran.
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

/**
 * Why the current server process is going away, or went away: `crash` marks an exit nobody asked for; the others are
 * requests, and when two meet the stronger one wins (`want` in instance.context.ts).
 */
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
  /** The launch's check-in secret before the spawn (a fast server checks in early), then again with the pid. */
  | { type: 'PROCESS_STARTED'; launchId: number; secret: string; pid: number | null }
  | ({ type: 'PROCESS_EXITED'; launchId: number } & ExitInfo)
  /**
   * The launch could not happen through no fault of the server's (the daemon out of descriptors or memory, the game
   * port still held): no process ran, nothing counts against the server, it is retried.
   */
  | { type: 'PROCESS_BLOCKED'; launchId: number; kind: LaunchBlockKind; message: string }
  /** The daemon is exiting: persist=true detaches from the server, false shuts it down gracefully. */
  | { type: 'SHUTDOWN'; persist: boolean }
  | { type: 'CONFIG'; timing: InstanceTiming; maintenance?: MaintenanceRules }
  /**
   * A restart at a moment: a person's `restart?when=` (`request`, never held; done at once without a server) or a
   * `RestartSchedule` fire (`schedule`, skipped without a server). `at`: the supervisor's stamp (`Stamp`).
   */
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

/** Why a launch was blocked: the daemon's resources (EMFILE, ENFILE, EAGAIN, ENOMEM) or a game port still held. */
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

/**
 * Commands to the `process` child (runProcess). Once the server is being shut down or killed, a later
 * STOP_GRACEFULLY, LEAVE or NOTIFY_UPDATE is ignored: a second request changes only what the machine does after.
 */
export type ProcessCommand =
  /** Graceful shutdown: POST /shutdown, wait for the exit, then kill the process group. */
  | { type: 'STOP_GRACEFULLY'; reason: string }
  /** POST /update so the game leaves at a convenient moment; if undeliverable, STOP_GRACEFULLY. */
  | { type: 'LEAVE' }
  /** POST /update; a delivery failure is only logged. */
  | { type: 'NOTIFY_UPDATE' }
  /** Hang: dump if configured and `dump` (the first hang of a loop only), then kill the process group. */
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
