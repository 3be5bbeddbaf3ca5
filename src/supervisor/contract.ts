/** What the layers above can do with an instance: they read this file and status.ts only, so routes test alone. */
import type { ControlAction, ControlArgs } from '../../machines/instance.refusals.ts';
import type { BackupListing, InstanceStatus } from './status.ts';

export type { ControlAction } from '../../machines/instance.refusals.ts';
/** `Now` | `RoundEnd` | `Empty`: when a restart or update is carried out (`Maintenance.When`, or `?when=`). */
export type { MaintenancePolicy } from '../../machines/instance.types.ts';

export interface InstanceBackupsControl {
  /** Newest first. */
  list(): Promise<BackupListing[]>;
  /** Of a running server too; rejects with the reason. */
  take(by: string): Promise<BackupListing>;
  /** The snapshot a rollback with data would put back, or null when none matches the installed build. */
  forRollback(): Promise<BackupListing | null>;
  has(id: string): Promise<boolean>;
}

/** The supervisor adds the time. */
export type ControlOptions = Omit<ControlArgs, 'at'>;

export interface InstanceControl {
  readonly key: string;
  /** The configured ApiToken; undefined means control is refused for this instance. */
  apiToken(): string | undefined;
  /** undefined when no server runs (every check-in is refused). */
  checkinSecret(): string | undefined;
  /** Why `action` cannot be done now (the control route's 409), or null. Absent: always taken. */
  refusal?(action: ControlAction): string | null;
  /** Never throws. Without `when`, a restart is at once and an update follows `Maintenance.When`. */
  control(action: ControlAction, opts?: ControlOptions): void;
  /** Holds scheduled restarts and update installs; null when held, else why not. Absent: not supported. */
  hold?(minutes: number, reason: string): string | null;
  release?(): boolean;
  /** The server console's limits when `Console` enables it, null when it is off (absent: no console). */
  consoleSettings?(): { commandsPerMinute: number } | null;
  /** One command line to the server's console; rejects with a `ConsoleError` (process/console-fifo.ts). */
  sendConsole?(command: string): Promise<void>;
  checkin(): void;
  status(): InstanceStatus;
  /** The state alone (`server.running`), for /health: cheaper than the whole status, which anyone may ask for there. */
  currentState(): string;
  binariesDir(): string;
  /** The folders under `instances/<key>/` shared read-only by `Files` (absent: none). */
  fileFolders?(): readonly string[];
  /** Snapshots of the instance's data (absent: not supported). */
  backups?: InstanceBackupsControl;
}

export interface InstanceRegistry {
  get(key: string): InstanceControl | undefined;
  list(): InstanceControl[];
  /** Configured but not ready yet: its requests get 503 with Retry-After, not 404. */
  starting?(key: string): boolean;
  /** The daemon is still registering its configured instances: `list()` is not every instance yet. */
  startingUp?(): boolean;
}
