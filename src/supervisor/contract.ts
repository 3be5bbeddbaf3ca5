/**
 * What http/, metrics/, cli/ and the daemon can do with a supervised instance: the layers above depend on this file
 * and status.ts only, so routes can be tested without the daemon.
 */
import type { ControlAction, ControlArgs } from '../../machines/instance.refusals.ts';
import type { BackupListing, InstanceStatus } from './status.ts';

export type { ControlAction } from '../../machines/instance.refusals.ts';
/** `Now` | `RoundEnd` | `Empty`: when a restart or update is carried out (`Maintenance.When`, or `?when=`). */
export type { MaintenancePolicy } from '../config/sections/maintenance.ts';

export interface InstanceBackupsControl {
  /** Newest first. */
  list(): Promise<BackupListing[]>;
  /** Takes a snapshot now (of a running server too); rejects with the reason, `space` when the disk is the cause. */
  take(by: string): Promise<BackupListing>;
  /** The snapshot a rollback with data would put back, or null when none matches the installed build. */
  forRollback(): Promise<BackupListing | null>;
  has(id: string): Promise<boolean>;
}

/** The supervisor adds the time. */
export type ControlOptions = Omit<ControlArgs, 'now'>;

export interface InstanceControl {
  readonly key: string;
  /** The configured ApiToken; undefined means control is refused for this instance. */
  apiToken(): string | undefined;
  /** undefined when no server runs (every check-in is refused). */
  checkinSecret(): string | undefined;
  /**
   * Why `action` cannot be done now (no update provider, no previous build, rollback while updating, …), or null when
   * it will be taken; the control route answers 409 with it before sending anything. Absent: always taken.
   */
  refusal?(action: ControlAction): string | null;
  /**
   * Queues a control action; never throws. `when` (restart and update only) carries it out by that policy
   * instead: a restart without it is immediate, an update without it follows the instance's `Maintenance.When`.
   */
  control(action: ControlAction, opts?: ControlOptions): void;
  /**
   * Holds scheduled restarts and automatic update installs for `minutes` (absent: not supported); null when held,
   * else why not (the daemon is shutting down).
   */
  hold?(minutes: number, reason: string): string | null;
  release?(): boolean;
  /** The server console's limits when `Console` enables it, null when it is off (absent: no console). */
  consoleSettings?(): { commandsPerMinute: number } | null;
  /**
   * Writes one command line to the server's console; rejects with a `ConsoleError` (process/console-fifo.ts):
   * `invalid` (a newline, control characters, too long), `not-reading` (no server holds the console), `failed`.
   */
  sendConsole?(command: string): Promise<void>;
  checkin(): void;
  status(): InstanceStatus;
  binariesDir(): string;
  /** The folders under `instances/<key>/` shared read-only by `Files` (absent: none). */
  fileFolders?(): readonly string[];
  /** Snapshots of the instance's data (absent: not supported). */
  backups?: InstanceBackupsControl;
}

export interface InstanceRegistry {
  get(key: string): InstanceControl | undefined;
  list(): InstanceControl[];
  /**
   * Whether `key` is configured but not ready yet (the daemon is still starting it): its requests get 503 with
   * Retry-After rather than the 404 of a key nobody configured.
   */
  starting?(key: string): boolean;
}
