/** The maintenance plan's types: pending restarts and updates, holds, and how data.json keeps them. */

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

/** A restart or update waiting for its moment. Times are epoch ms, stamped by the supervisor on its events. */
export interface PendingAction {
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
}

export interface Hold {
  since: number;
  until: number;
  reason: string;
}

/**
 * The maintenance plan as data.json keeps it for the next daemon: the pending action with how far it got, and a hold.
 * `asked`: the server was told to leave at its round end; `carried`: its shutdown was asked for; `forced`: by the
 * deadline.
 */
export interface SavedMaintenance {
  pending: (PendingAction & { asked: boolean; carried: boolean; forced: boolean }) | null;
  hold: Hold | null;
}

/** How a pending action or hold ended, as the notices say it. */
export type MaintenanceOutcome = 'done' | 'forced' | 'released' | 'expired' | 'dropped';
/** A scheduled restart, a person's restart, an update, or a hold, as the notices name them. */
export type MaintenanceKind = 'scheduled-restart' | 'restart' | 'update' | 'hold';
