/**
 * The maintenance plan's types (re-exported by instance.types.ts): pending restarts and updates, holds, and how
 * data.json keeps them. Types only.
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

/** When a restart or found update is carried out while a server runs (config `Maintenance.When`). */
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

/** A restart or update waiting for its moment, as data.json keeps it (wall times, see `Stamp`). */
export interface SavedPending {
  action: 'restart' | 'update';
  source: PendingSource;
  when: MaintenancePolicy;
  since: number;
  /** When it is forced, whatever the policy (MaxDelayMinutes after it began or a hold ended). */
  deadline: number;
  maxDelayMs: number;
  /** Why the daemon itself asked (a memory limit passed); told with the pending notice. */
  reason?: string;
  /** A restore: the restart puts this backup of the data back while no server runs (`RESTORE`). */
  restore?: string;
  /** Who asked for it (a `request`), as the notices name them. */
  by?: string;
}

/** A restart or update waiting for its moment: `due` is `deadline` on the monotonic clock, what the wait runs on. */
export interface PendingAction extends SavedPending {
  due: number;
}

/** A hold as data.json keeps it: from `since` until `until` (wall times). */
export interface SavedHold {
  since: number;
  until: number;
  reason: string;
}

/** A hold: `ends` is `until` on the monotonic clock, what its timer runs on. */
export interface Hold extends SavedHold {
  ends: number;
}

/**
 * The maintenance plan as data.json keeps it for the next daemon: the pending action with how far it got, and a hold.
 * `asked`: the server was told to leave at its round end; `carried`: its shutdown was asked for; `forced`: by the
 * deadline.
 */
export interface SavedMaintenance {
  pending: (SavedPending & { asked: boolean; carried: boolean; forced: boolean }) | null;
  hold: SavedHold | null;
}

/** How a pending action or hold ended, as the notices say it. */
export type MaintenanceOutcome = 'done' | 'forced' | 'released' | 'expired' | 'dropped';
/** A scheduled restart, a person's restart, an update, or a hold, as the notices name them. */
export type MaintenanceKind = 'scheduled-restart' | 'restart' | 'update' | 'hold';
