/**
 * The instance contract: what http/, metrics/, cli/ and the daemon read of a supervised instance. The supervisor
 * implements it; the layers above depend on this file only, so routes can be tested without the daemon.
 */
import type { ControlAction } from '../../machines/instance.refusals.ts';
import type { ExitReason } from '../../machines/instance.types.ts';
import type { DiskReading } from '../bus.ts';
import type { MaintenancePolicy } from '../config/sections/maintenance.ts';

export interface InstanceStatus {
  key: string;
  name: string;
  /**
   * The machine's state path in its `lifecycle` region: `server.running`, `server.awaiting-checkin`, `stopped.idle`,
   * `restarting.backoff`, `restarting.blocked`, …
   */
  state: string;
  pid: number | null;
  revision: string | null;
  lastCheckinAt: string | null;
  startedAt: string | null;
  uptimeSeconds: number | null;
  startupFailures: number;
  restarts: number;
  /** Crashes and hang kills after check-ins since the last stable run (`StableRunSeconds`); absent: unknown. */
  crashStreak?: number;
  updatePending: boolean;
  stopRequested: boolean;
  /** An update provider (`UpdateType`) is configured, so `update` can find a build (absent: unknown). */
  canUpdate?: boolean;
  /** A previous build (`bin.prev`) is kept, so `rollback` has something to go back to (absent: unknown). */
  canRollback?: boolean;
  /**
   * Per control action, whether the instance takes it now and, when not, why: the answer the control routes give
   * (409 with the reason), from the machine. The dashboard's buttons follow it (absent: an older daemon).
   */
  controls?: Record<ControlAction, ControlChoice>;
  /** An update check asked for (`update`) is running or queued; `watchdog update --wait` waits for its answer. */
  checking?: boolean;
  /**
   * While launches are blocked by the daemon's resources or a held game port (state `restarting.blocked`, and the
   * launch after it until it spawns): what blocked the last one and how many were; absent otherwise.
   */
  launchBlocked?: { kind: 'resources' | 'port'; message: string; attempts: number };
  /** How the last server process ended (null before any has): why, its exit code or signal, and when (ISO). */
  lastExit: LastExitStatus | null;
  /**
   * An operator's stop that keeps the instance stopped, across daemon restarts too, until a restart or rollback:
   * who (`by boss from 10.0.0.5`, '' when unknown) and when (ISO). Null otherwise (absent: an older daemon).
   */
  stoppedBy?: { by: string; at: string } | null;
  /** An update's download while it runs; null otherwise (absent: an older daemon). */
  download?: DownloadProgress | null;
  /** The last update check's outcome; null before the first (absent: an older daemon). */
  updateCheck?: UpdateCheckStatus | null;
  /** Scheduled restarts and update checks, what is pending and any hold (absent: unknown). */
  maintenance?: MaintenanceStatus;
  /** In Agones mode (docs/agones.md): the GameServer this instance is wrapped as (absent: not in Agones mode). */
  agones?: AgonesStatus;
  /**
   * The file systems the daemon watches (the instance root's and the working folder's), each with its free space and
   * whether it is low (absent: not read yet, or an older daemon). The same for every instance.
   */
  disk?: DiskReading[];
  /**
   * CPU and memory of the server and the processes it started, sampled every `Timing.ResourceSampleSeconds` while
   * it runs; null when none runs or before the first sample (absent: an older daemon).
   */
  resources?: ResourceStatus | null;
  /** The server console (`Console`) is enabled for the instance (absent: an older daemon, read as off). */
  console?: boolean;
  /** Players on the server by its `/status`, read at the same interval; null when unknown (absent: an older daemon). */
  players?: number | null;
  /** The last snapshot of the instance's data, taken or failed; null before the first (absent: an older daemon). */
  backup?: BackupStatus | null;
  /** The last restore of a snapshot (`restore`, or `rollback --with-data`); null before the first. */
  restore?: RestoreStatus | null;
  /** Whether the hubs the server advertises to list it; absent when it does not advertise or is not running. */
  hub?: HubStatus;
}

/** The hub watch of a running server that advertises (`Hub.Watch`). */
export interface HubStatus {
  /** The address the hubs are asked about (`hub.server_url`, or what the engine guessed); '' until known. */
  address: string;
  hubs: {
    hub: string;
    /** null: not known yet, or the hub could not be asked. */
    listed: boolean | null;
    /** Since when the hub has not listed the server (ISO); null while listed or unknown. */
    missingSince: string | null;
    /** The last thing that went wrong: the hub unreachable, or its refusal in the server's log. */
    lastError: string | null;
    /** When the hub last answered (ISO). */
    checkedAt: string | null;
  }[];
}

/** The last time a snapshot was put back in place of the instance's data. */
export interface RestoreStatus {
  /** When it ended (ISO). */
  at: string;
  ok: boolean;
  /** The snapshot put back (or that could not be). */
  id: string | null;
  /** The `before-restore` snapshot of the data it replaced; null when the restore failed before taking it. */
  saved: string | null;
  /** A `rollback --with-data` (the build went back too), not a `restore`. */
  rollback: boolean;
  /** Why it failed; null when it worked. */
  error: string | null;
}

/** Whether a control action is taken now; `reason` says why not (null when it is). */
export interface ControlChoice {
  allowed: boolean;
  reason: string | null;
}

/** The last snapshot of an instance's data (`Backups`). */
export interface BackupStatus {
  /** When it ended (ISO). */
  at: string;
  ok: boolean;
  /** before-update, manual, scheduled or before-restore. */
  kind: string;
  /** The snapshot taken; null when it failed. */
  id: string | null;
  /** Its compressed size; null when it failed. */
  archiveBytes: number | null;
  /** Why it failed; null when it worked. */
  error: string | null;
  /** The last snapshot that worked (ISO); null when none has since the daemon started. */
  lastSuccessAt: string | null;
}

/** One snapshot as `watchdog backups` and `GET /instances/<key>/backups` list it. */
export interface BackupListing {
  id: string;
  kind: string;
  takenAt: string;
  /** The build installed when it was taken. */
  revision: string | null;
  /** For before-update: the build that was about to be installed. */
  revisionAfter: string | null;
  /** The files' total size, and the archive's. */
  bytes: number;
  archiveBytes: number;
  files: number;
  /** The snapshot `rollback --with-data` puts back: taken just before the installed build was installed. */
  forRollback?: boolean;
}

/** An instance's snapshots, for the routes. */
export interface InstanceBackupsControl {
  /** Newest first. */
  list(): Promise<BackupListing[]>;
  /** Takes a snapshot now (of a running server too); rejects with the reason, `space` when the disk is the cause. */
  take(by: string): Promise<BackupListing>;
  /** The snapshot a rollback with data would put back, or null when none matches the installed build. */
  forRollback(): Promise<BackupListing | null>;
  /** Whether snapshot `id` exists. */
  has(id: string): Promise<boolean>;
}

/** One sample of a running server's process tree (its process group and every descendant). */
export interface ResourceStatus {
  /** CPU used since the previous sample, in % of one core (200 = two cores busy). */
  cpuPercent: number;
  /** CPU time of the tree since the launch, in seconds (what `watchdog_instance_cpu_seconds_total` reports). */
  cpuSeconds: number;
  /** Resident memory of the tree, summed over its processes. */
  rssBytes: number;
  /** How many processes the tree had. */
  processes: number;
  /** When it was sampled (ISO). */
  at: string;
}

/** The GameServer as the Agones SDK server last reported it (null before it has), and whether Ready was sent. */
export interface AgonesStatus {
  gameServer: string | null;
  /** The GameServer's state: Scheduled, Ready, Allocated, Shutdown, Unhealthy, … */
  state: string | null;
  ready: boolean;
}

/** `Now` | `RoundEnd` | `Empty`: when a restart or update is carried out (`Maintenance.When`, or `?when=`). */
export type { MaintenancePolicy } from '../config/sections/maintenance.ts';

export interface MaintenanceStatus {
  /** The instance's `Maintenance.When` (RoundEnd when unset). */
  policy: MaintenancePolicy;
  /**
   * A restart or update waiting for its moment: what began it (`schedule`, a found `update`, a person's `request`),
   * its policy, since when, the deadline of its forced graceful shutdown, and what it waits for now.
   */
  pending: {
    action: 'restart' | 'update';
    source: 'schedule' | 'update' | 'request';
    when: MaintenancePolicy;
    since: string;
    deadline: string;
    waitingFor: 'hold' | 'Empty' | 'RoundEnd' | 'exit';
    /** A restore's restart: the backup it puts back. */
    restore?: string;
  } | null;
  nextRestart: string | null;
  nextUpdateCheck: string | null;
  /**
   * The revision of a found update already downloaded and made ready (CiServer, Manifest, Git), so the install when
   * its moment comes is only a swap; null when none waits or the provider has nothing to fetch (Local, Dummy).
   */
  staged: string | null;
  /** Scheduled restarts and automatic update installs wait until `until` (ISO). */
  hold: { reason: string; since: string; until: string } | null;
}

/** `reason`: crash | hang | stop | restart | update | shutdown (see `ExitReason` in machines/instance.types.ts). */
/** The last update check's outcome: a failing check is shown, not read as "no update". */
export interface UpdateCheckStatus {
  /** When it ended (ISO). */
  at: string;
  result: 'available' | 'none' | 'failed';
  /** Why it failed, with its cause (`cannot fetch the manifest at …: getaddrinfo ENOTFOUND …`); null otherwise. */
  error: string | null;
  /** The first of the failures in a row (ISO); null while checks work. */
  failingSince: string | null;
  /** The last check that worked (ISO); null when none has since the daemon started. */
  lastSuccessAt: string | null;
}

/** An update's download while it runs. */
export interface DownloadProgress {
  bytes: number;
  /** The size the server announced; null when it sent none. */
  total: number | null;
  /** Average since the download began; null in its first half second. */
  bytesPerSecond: number | null;
  /** Time left at that rate; null without a total or a rate. */
  etaSeconds: number | null;
  /** When the download began (ISO). */
  since: string;
}

/** How a control action was asked for. */
export interface ControlOptions {
  /** Restart and update only: carry it out by this policy instead of at once. */
  when?: MaintenancePolicy;
  /** Who asked, for the chat message and the remembered stop (`by boss from 10.0.0.5`); '' when unknown. */
  by?: string;
  /** Rollback only: also put back the data snapshot taken before the installed build was installed. */
  withData?: boolean;
  /** Restore only: the snapshot to put back. */
  snapshot?: string;
}

export interface LastExitStatus {
  reason: ExitReason;
  code: number | null;
  signal: string | null;
  /** Why, in words: the launch error, or the server's last output line after a crash; null otherwise. */
  detail: string | null;
  at: string;
}

export type { ControlAction } from '../../machines/instance.refusals.ts';

export interface InstanceControl {
  readonly key: string;
  /** The configured ApiToken; undefined means control is refused for this instance. */
  apiToken(): string | undefined;
  /** The secret of the current launch; undefined when no server runs (every check-in is refused). */
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
  /** Holds scheduled restarts and automatic update installs for `minutes` (absent: not supported). */
  hold?(minutes: number, reason: string): void;
  /** Ends a hold; false when there was none. */
  release?(): boolean;
  /** The server console's limits when `Console` enables it, null when it is off (absent: no console). */
  consoleSettings?(): { commandsPerMinute: number } | null;
  /**
   * Writes one command line to the server's console; rejects with a `ConsoleError` (process/console-fifo.ts):
   * `invalid` (a newline, control characters, too long), `not-reading` (no server holds the console), `failed`.
   */
  sendConsole?(command: string): Promise<void>;
  /** Records a check-in authenticated with the current secret. */
  checkin(): void;
  status(): InstanceStatus;
  /** Absolute path of `instances/<key>/binaries`. */
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
