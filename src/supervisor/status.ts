/**
 * An instance's status and its snapshots as the API answers them: valibot schemas, written once; the types and the
 * OpenAPI document are derived from them. An optional field is absent from an older daemon's answers.
 */
import * as v from 'valibot';
import { MAINTENANCE_POLICIES } from '../../machines/instance.types.ts';
import { DiskReadingSchema } from '../disk-reading.ts';

const about = <S extends v.GenericSchema>(schema: S, description: string) => v.pipe(schema, v.description(description));

export const Iso = about(v.string(), 'ISO 8601 time');

export const LastExitSchema = v.object({
  reason: about(
    v.picklist(['crash', 'memory-limit', 'hang', 'stop', 'restart', 'update', 'shutdown', 'launch-failed']),
    'launch-failed: no server ran (see detail); memory-limit: a crash, killed at Limits.MemoryMB',
  ),
  code: v.nullable(v.number()),
  signal: v.nullable(v.string()),
  detail: about(
    v.nullable(v.string()),
    "why, in words: the launch error, or the server's last output line after a crash",
  ),
  at: Iso,
});
export type LastExitStatus = v.InferOutput<typeof LastExitSchema>;

const ResourceSchema = v.object({
  cpuPercent: about(v.number(), 'CPU since the previous sample, in % of one core (200: two cores)'),
  cpuSeconds: about(v.number(), 'CPU time of the tree since the launch'),
  rssBytes: about(v.number(), 'resident memory of every process of the tree, summed'),
  processes: v.number(),
  at: Iso,
});
export type ResourceStatus = v.InferOutput<typeof ResourceSchema>;

const UpdateCheckSchema = v.object({
  at: Iso,
  result: v.picklist(['available', 'none', 'failed']),
  error: v.nullable(v.string()),
  failingSince: v.nullable(Iso),
  lastSuccessAt: v.nullable(Iso),
});
export type UpdateCheckStatus = v.InferOutput<typeof UpdateCheckSchema>;

const Policy = v.picklist(MAINTENANCE_POLICIES);

export const MaintenanceStatusSchema = v.object({
  policy: about(Policy, 'Maintenance.When of the instance'),
  pending: v.nullable(
    v.object({
      action: v.picklist(['restart', 'update']),
      source: about(
        v.picklist(['schedule', 'update', 'request']),
        'RestartSchedule, a found update, or a request with ?when=',
      ),
      when: Policy,
      since: Iso,
      deadline: about(Iso, 'when it is done with a graceful shutdown whatever the players'),
      waitingFor: v.picklist(['hold', 'Empty', 'RoundEnd', 'exit']),
      restore: v.optional(about(v.string(), "a restore's restart: the snapshot it puts back")),
    }),
  ),
  nextRestart: v.nullable(Iso),
  nextUpdateCheck: v.nullable(Iso),
  staged: about(
    v.nullable(v.string()),
    'revision of a found update already downloaded (or built) and staged for its install',
  ),
  hold: v.nullable(v.object({ reason: v.string(), since: Iso, until: Iso })),
});
export type MaintenanceStatus = v.InferOutput<typeof MaintenanceStatusSchema>;

export const AgonesStatusSchema = v.object({
  gameServer: about(v.nullable(v.string()), 'the GameServer name, once the SDK server has told it'),
  state: about(v.nullable(v.string()), 'the GameServer state: Scheduled, Ready, Allocated, Shutdown, …'),
  ready: about(v.boolean(), 'the watchdog has told Agones the server is Ready'),
});
export type AgonesStatus = v.InferOutput<typeof AgonesStatusSchema>;

const ControlChoiceSchema = v.object({
  allowed: v.boolean(),
  reason: about(v.nullable(v.string()), 'why it is refused; null when it is taken'),
});
export type ControlChoice = v.InferOutput<typeof ControlChoiceSchema>;

const DownloadSchema = v.object({
  bytes: v.number(),
  total: v.nullable(v.number()),
  bytesPerSecond: v.nullable(v.number()),
  etaSeconds: v.nullable(v.number()),
  since: Iso,
});
export type DownloadProgress = v.InferOutput<typeof DownloadSchema>;

const BackupStatusSchema = v.object({
  at: Iso,
  ok: v.boolean(),
  kind: v.string(),
  id: v.nullable(v.string()),
  archiveBytes: v.nullable(v.number()),
  error: v.nullable(v.string()),
  lastSuccessAt: v.nullable(Iso),
});
export type BackupStatus = v.InferOutput<typeof BackupStatusSchema>;

const HubSchema = v.object({
  address: about(v.string(), "the address the hubs are asked about; '' until known"),
  hubs: v.array(
    v.object({
      hub: v.string(),
      listed: about(v.nullable(v.boolean()), 'null: not known yet, or the hub could not be asked'),
      missingSince: v.nullable(Iso),
      lastError: v.nullable(v.string()),
      checkedAt: v.nullable(Iso),
    }),
  ),
});
export type HubStatus = v.InferOutput<typeof HubSchema>;

const RestoreSchema = v.object({
  at: Iso,
  ok: v.boolean(),
  id: about(v.nullable(v.string()), 'the snapshot put back'),
  saved: about(v.nullable(v.string()), 'the before-restore snapshot of the data it replaced'),
  rollback: about(v.boolean(), 'a rollback with data, not a restore'),
  error: v.nullable(v.string()),
});
export type RestoreStatus = v.InferOutput<typeof RestoreSchema>;

export const InstanceStatusSchema = v.object({
  key: v.string(),
  name: v.string(),
  state: about(
    v.string(),
    'dotted path of the active state: server.running, server.awaiting-checkin, stopped.idle, restarting.backoff, …',
  ),
  pid: v.nullable(v.number()),
  revision: v.nullable(v.string()),
  lastCheckinAt: v.nullable(v.string()),
  secondsSinceCheckin: v.optional(
    about(
      v.nullable(v.number()),
      'whole seconds since the last check-in of this launch, on the monotonic clock (a step of the wall clock does not move it); null before it',
    ),
  ),
  startedAt: v.nullable(v.string()),
  uptimeSeconds: v.nullable(v.number()),
  startupFailures: v.number(),
  restarts: v.number(),
  crashStreak: v.optional(about(v.number(), 'crashes and hang kills after check-ins since the last stable run')),
  updatePending: v.boolean(),
  stopRequested: v.boolean(),
  stoppedBy: v.optional(
    about(
      v.nullable(v.object({ by: v.string(), at: Iso })),
      "an operator's stop, kept across daemon restarts until a restart, rollback or restore: who and when",
    ),
  ),
  canUpdate: v.optional(about(v.boolean(), 'an update provider (UpdateType) is configured')),
  canRollback: v.optional(about(v.boolean(), 'a previous build (bin.prev) is kept')),
  // The control routes' own answers (409 with the reason), from the machine; the dashboard's buttons follow them.
  controls: v.optional(
    about(
      v.object({
        restart: ControlChoiceSchema,
        update: ControlChoiceSchema,
        stop: ControlChoiceSchema,
        rollback: ControlChoiceSchema,
        restore: ControlChoiceSchema,
      }),
      'per control action: whether it is taken now, and why not (the reason a control request gets with 409)',
    ),
  ),
  checking: v.optional(about(v.boolean(), 'an update check asked for is running or queued')),
  console: v.optional(
    about(v.boolean(), 'the server console (Console) is on: POST /instances/{key}/console takes commands'),
  ),
  download: v.optional(
    about(
      v.nullable(DownloadSchema),
      "an update's download while it runs: bytes, total, average rate and time left; null otherwise",
    ),
  ),
  updateCheck: v.optional(
    about(
      v.nullable(UpdateCheckSchema),
      'the last update check: what it found, or why it failed and since when; null before the first',
    ),
  ),
  // Absent while launches are not blocked (and once the launch after a block spawns).
  launchBlocked: v.optional(
    about(
      v.object({ kind: v.picklist(['resources', 'port']), message: v.string(), attempts: v.number() }),
      "launches blocked by the watchdog's resources or a held game port: why, and how many",
    ),
  ),
  lastExit: v.nullable(LastExitSchema),
  maintenance: v.optional(MaintenanceStatusSchema),
  agones: v.optional(about(AgonesStatusSchema, 'Agones mode only: the GameServer this instance is')),
  // The same for every instance; absent until the disk watcher has read them.
  disk: v.optional(about(v.array(DiskReadingSchema), 'the file systems of the instance root and the working folder')),
  resources: v.optional(
    about(
      v.nullable(ResourceSchema),
      'CPU and memory of the server and what it started, at the last sample; null when none runs',
    ),
  ),
  players: v.optional(
    about(v.nullable(v.number()), "players by the server's /status at the last sample; null: unknown"),
  ),
  backup: v.optional(
    about(
      v.nullable(BackupStatusSchema),
      "the last snapshot of the instance's data, taken or failed; null before the first",
    ),
  ),
  hub: v.optional(
    about(HubSchema, 'whether the hubs a running server advertises to list it (Hub.Watch); absent otherwise'),
  ),
  restore: v.optional(
    about(
      v.nullable(RestoreSchema),
      'the last restore of a snapshot (restore, or rollback with data); null before the first',
    ),
  ),
});
export type InstanceStatus = v.InferOutput<typeof InstanceStatusSchema>;

/** What the daemon adds to an instance's own status (src/daemon/run.ts): the GameServer, the disks, the hubs. */
export type StatusExtras = Pick<InstanceStatus, 'agones' | 'disk' | 'hub'>;

export const BackupSchema = v.object({
  id: v.string(),
  kind: about(v.string(), 'before-update, manual, scheduled or before-restore'),
  takenAt: Iso,
  revision: about(v.nullable(v.string()), 'the build installed when it was taken'),
  revisionAfter: about(v.nullable(v.string()), 'before-update: the build about to be installed'),
  bytes: about(v.number(), "the files' total size"),
  archiveBytes: about(v.number(), 'the compressed archive'),
  files: v.number(),
  forRollback: v.optional(about(v.boolean(), 'the snapshot a rollback with withData=true puts back (listings only)')),
});
/** One snapshot as `watchdog backups` and `GET /instances/<key>/backups` list it. */
export type BackupListing = v.InferOutput<typeof BackupSchema>;
