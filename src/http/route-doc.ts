/**
 * What each route module says about its routes for the OpenAPI document (`GET /openapi.json`, openapi-routes.ts):
 * a small table beside the routes, and the valibot schemas of the JSON bodies they answer with. The handlers type
 * their bodies with these schemas' outputs (and the status schema is checked against `InstanceStatus` at compile
 * time), so the document and the answers cannot drift; nothing here runs per request. test/http/openapi.test.ts
 * fails when the app serves a route that no table lists.
 */
import * as v from 'valibot';
import type { DiskReading } from '../bus.ts';
import { MAINTENANCE_POLICIES } from '../config/sections/maintenance.ts';
import type {
  AgonesStatus,
  InstanceStatus,
  LastExitStatus,
  MaintenanceStatus,
  ResourceStatus,
  UpdateCheckStatus,
} from '../supervisor/contract.ts';
import { CONTROL_VERBS } from './control.ts';
import type { FileListing } from './shared-files.ts';

export const LastExitSchema = v.object({
  reason: v.pipe(
    v.picklist(['crash', 'hang', 'stop', 'restart', 'update', 'shutdown', 'launch-failed']),
    v.description('launch-failed: no server ran (see detail)'),
  ),
  code: v.nullable(v.number()),
  signal: v.nullable(v.string()),
  detail: v.pipe(
    v.nullable(v.string()),
    v.description("why, in words: the launch error, or the server's last output line after a crash"),
  ),
  at: v.pipe(v.string(), v.description('ISO 8601 time')),
});

const Iso = v.pipe(v.string(), v.description('ISO 8601 time'));

export const ResourceSchema = v.object({
  cpuPercent: v.pipe(v.number(), v.description('CPU since the previous sample, in % of one core (200: two cores)')),
  cpuSeconds: v.pipe(v.number(), v.description('CPU time of the tree since the launch')),
  rssBytes: v.pipe(v.number(), v.description('resident memory of every process of the tree, summed')),
  processes: v.number(),
  at: Iso,
});

export const UpdateCheckSchema = v.object({
  at: Iso,
  result: v.picklist(['available', 'none', 'failed']),
  error: v.nullable(v.string()),
  failingSince: v.nullable(Iso),
  lastSuccessAt: v.nullable(Iso),
});
const Policy = v.picklist(MAINTENANCE_POLICIES);

export const MaintenanceStatusSchema = v.object({
  policy: v.pipe(Policy, v.description('Maintenance.When of the instance')),
  pending: v.nullable(
    v.object({
      action: v.picklist(['restart', 'update']),
      source: v.pipe(
        v.picklist(['schedule', 'update', 'request']),
        v.description('RestartSchedule, a found update, or a request with ?when='),
      ),
      when: Policy,
      since: Iso,
      deadline: v.pipe(Iso, v.description('when it is done with a graceful shutdown whatever the players')),
      waitingFor: v.picklist(['hold', 'Empty', 'RoundEnd', 'exit']),
    }),
  ),
  nextRestart: v.nullable(Iso),
  nextUpdateCheck: v.nullable(Iso),
  staged: v.pipe(
    v.nullable(v.string()),
    v.description('revision of a found update already downloaded (or built) and staged for its install'),
  ),
  hold: v.nullable(v.object({ reason: v.string(), since: Iso, until: Iso })),
});

export const AgonesStatusSchema = v.object({
  gameServer: v.pipe(v.nullable(v.string()), v.description('the GameServer name, once the SDK server has told it')),
  state: v.pipe(
    v.nullable(v.string()),
    v.description('the GameServer state: Scheduled, Ready, Allocated, Shutdown, …'),
  ),
  ready: v.pipe(v.boolean(), v.description('the watchdog has told Agones the server is Ready')),
});

export const DiskReadingSchema = v.object({
  holds: v.pipe(v.string(), v.description('instances, working folder, or instances and working folder')),
  path: v.string(),
  mount: v.string(),
  freeBytes: v.nullable(v.number()),
  totalBytes: v.nullable(v.number()),
  thresholdBytes: v.nullable(v.number()),
  low: v.pipe(
    v.boolean(),
    v.description('free space is below the threshold (Disk.LowFreeMegabytes or Disk.LowFreePercent)'),
  ),
  error: v.pipe(v.nullable(v.string()), v.description('why it could not be read (the folder removed, no permission)')),
  message: v.pipe(v.string(), v.description('the figures in words, as the chat is told')),
});

const ControlChoiceSchema = v.object({
  allowed: v.boolean(),
  reason: v.pipe(v.nullable(v.string()), v.description('why it is refused; null when it is taken')),
});

export const InstanceStatusSchema = v.object({
  key: v.string(),
  name: v.string(),
  state: v.pipe(
    v.string(),
    v.description(
      'dotted path of the active state: server.running, server.awaiting-checkin, stopped.idle, restarting.backoff, …',
    ),
  ),
  pid: v.nullable(v.number()),
  revision: v.nullable(v.string()),
  lastCheckinAt: v.nullable(v.string()),
  startedAt: v.nullable(v.string()),
  uptimeSeconds: v.nullable(v.number()),
  startupFailures: v.number(),
  restarts: v.number(),
  crashStreak: v.optional(
    v.pipe(v.number(), v.description('crashes and hang kills after check-ins since the last stable run')),
  ),
  updatePending: v.boolean(),
  stopRequested: v.boolean(),
  stoppedBy: v.optional(
    v.pipe(
      v.nullable(v.object({ by: v.string(), at: Iso })),
      v.description("an operator's stop, kept across daemon restarts until a restart or rollback: who and when"),
    ),
  ),
  canUpdate: v.optional(v.pipe(v.boolean(), v.description('an update provider (UpdateType) is configured'))),
  canRollback: v.optional(v.pipe(v.boolean(), v.description('a previous build (bin.prev) is kept'))),
  controls: v.optional(
    v.pipe(
      v.object({
        restart: ControlChoiceSchema,
        update: ControlChoiceSchema,
        stop: ControlChoiceSchema,
        rollback: ControlChoiceSchema,
        restore: ControlChoiceSchema,
      }),
      v.description(
        'per control action: whether it is taken now, and why not (the reason a control request gets with 409)',
      ),
    ),
  ),
  checking: v.optional(v.pipe(v.boolean(), v.description('an update check asked for is running or queued'))),
  console: v.optional(
    v.pipe(
      v.boolean(),
      v.description('the server console (Console) is on: POST /instances/{key}/console takes commands'),
    ),
  ),
  download: v.optional(
    v.pipe(
      v.nullable(
        v.object({
          bytes: v.number(),
          total: v.nullable(v.number()),
          bytesPerSecond: v.nullable(v.number()),
          etaSeconds: v.nullable(v.number()),
          since: Iso,
        }),
      ),
      v.description("an update's download while it runs: bytes, total, average rate and time left; null otherwise"),
    ),
  ),
  updateCheck: v.optional(
    v.pipe(
      v.nullable(UpdateCheckSchema),
      v.description('the last update check: what it found, or why it failed and since when; null before the first'),
    ),
  ),
  launchBlocked: v.optional(
    v.pipe(
      v.object({ kind: v.picklist(['resources', 'port']), message: v.string(), attempts: v.number() }),
      v.description("launches blocked by the watchdog's resources or a held game port: why, and how many"),
    ),
  ),
  lastExit: v.nullable(LastExitSchema),
  maintenance: v.optional(MaintenanceStatusSchema),
  agones: v.optional(v.pipe(AgonesStatusSchema, v.description('Agones mode only: the GameServer this instance is'))),
  disk: v.optional(
    v.pipe(v.array(DiskReadingSchema), v.description('the file systems of the instance root and the working folder')),
  ),
  resources: v.optional(
    v.pipe(
      v.nullable(ResourceSchema),
      v.description('CPU and memory of the server and what it started, at the last sample; null when none runs'),
    ),
  ),
  players: v.optional(
    v.pipe(v.nullable(v.number()), v.description("players by the server's /status at the last sample; null: unknown")),
  ),
  backup: v.optional(
    v.pipe(
      v.nullable(
        v.object({
          at: Iso,
          ok: v.boolean(),
          kind: v.string(),
          id: v.nullable(v.string()),
          archiveBytes: v.nullable(v.number()),
          error: v.nullable(v.string()),
          lastSuccessAt: v.nullable(Iso),
        }),
      ),
      v.description("the last snapshot of the instance's data, taken or failed; null before the first"),
    ),
  ),
  hub: v.optional(
    v.pipe(
      v.object({
        address: v.pipe(v.string(), v.description("the address the hubs are asked about; '' until known")),
        hubs: v.array(
          v.object({
            hub: v.string(),
            listed: v.pipe(
              v.nullable(v.boolean()),
              v.description('null: not known yet, or the hub could not be asked'),
            ),
            missingSince: v.nullable(Iso),
            lastError: v.nullable(v.string()),
            checkedAt: v.nullable(Iso),
          }),
        ),
      }),
      v.description('whether the hubs a running server advertises to list it (Hub.Watch); absent otherwise'),
    ),
  ),
  restore: v.optional(
    v.pipe(
      v.nullable(
        v.object({
          at: Iso,
          ok: v.boolean(),
          id: v.pipe(v.nullable(v.string()), v.description('the snapshot put back')),
          saved: v.pipe(v.nullable(v.string()), v.description('the before-restore snapshot of the data it replaced')),
          rollback: v.pipe(v.boolean(), v.description('a rollback with data, not a restore')),
          error: v.nullable(v.string()),
        }),
      ),
      v.description('the last restore of a snapshot (restore, or rollback with data); null before the first'),
    ),
  ),
});

/** Both ways: a field added to, dropped from or retyped in `InstanceStatus` without the schema fails the typecheck. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const statusMatches: Same<v.InferOutput<typeof InstanceStatusSchema>, InstanceStatus> = true;
const lastExitMatches: Same<v.InferOutput<typeof LastExitSchema>, LastExitStatus> = true;
const maintenanceMatches: Same<v.InferOutput<typeof MaintenanceStatusSchema>, MaintenanceStatus> = true;
const agonesMatches: Same<v.InferOutput<typeof AgonesStatusSchema>, AgonesStatus> = true;
const diskMatches: Same<v.InferOutput<typeof DiskReadingSchema>, DiskReading> = true;
const updateCheckMatches: Same<v.InferOutput<typeof UpdateCheckSchema>, UpdateCheckStatus> = true;
const resourceMatches: Same<v.InferOutput<typeof ResourceSchema>, ResourceStatus> = true;
void resourceMatches;
void diskMatches;
void agonesMatches;
void maintenanceMatches;
void statusMatches;
void lastExitMatches;
void updateCheckMatches;

export const ErrorSchema = v.object({ error: v.string() });

/** The logs route's 404: the instances are listed only to an Admin or loopback client. */
export const UnknownInstanceSchema = v.object({ error: v.string(), instances: v.optional(v.array(v.string())) });

export const HealthSchema = v.object({
  status: v.pipe(
    v.picklist(['ok', 'degraded']),
    v.description('degraded: something needs a person (see problems); the answer is still 200, the daemon still works'),
  ),
  problems: v.optional(v.pipe(v.array(v.string()), v.description('what is degraded, in words (a disk low on space)'))),
  disk: v.optional(v.array(DiskReadingSchema)),
  version: v.string(),
  pid: v.number(),
  uptimeSeconds: v.number(),
  instances: v.pipe(v.record(v.string(), v.string()), v.description('each instance key with its state')),
});
export type Health = v.InferOutput<typeof HealthSchema>;

export const LogsSchema = v.object({ key: v.string(), found: v.boolean(), lines: v.array(v.string()) });
export type Logs = v.InferOutput<typeof LogsSchema>;

export const DashboardLogSchema = v.object({ key: v.string(), lines: v.array(v.string()) });
export type DashboardLog = v.InferOutput<typeof DashboardLogSchema>;

export const DashboardControlSchema = v.object({
  key: v.string(),
  action: v.picklist(CONTROL_VERBS),
  accepted: v.literal(true),
});
export type DashboardControl = v.InferOutput<typeof DashboardControlSchema>;

export const BackupSchema = v.object({
  id: v.string(),
  kind: v.pipe(v.string(), v.description('before-update, manual, scheduled or before-restore')),
  takenAt: Iso,
  revision: v.pipe(v.nullable(v.string()), v.description('the build installed when it was taken')),
  revisionAfter: v.pipe(v.nullable(v.string()), v.description('before-update: the build about to be installed')),
  bytes: v.pipe(v.number(), v.description("the files' total size")),
  archiveBytes: v.pipe(v.number(), v.description('the compressed archive')),
  files: v.number(),
  forRollback: v.optional(
    v.pipe(v.boolean(), v.description('the snapshot a rollback with withData=true puts back (listings only)')),
  ),
});
export type Backup = v.InferOutput<typeof BackupSchema>;
export const ConsoleCommandSchema = v.object({
  command: v.pipe(
    v.string(),
    v.description('one console command line: printable, no newline or control character, at most 1023 bytes'),
  ),
});
export const ConsoleSentSchema = v.object({ sent: v.literal(true) });
export const FileListingSchema = v.object({
  path: v.pipe(v.string(), v.description("the folder under instances/<key>/; '' for the list of shared folders")),
  entries: v.array(
    v.object({
      name: v.string(),
      type: v.picklist(['file', 'folder']),
      size: v.pipe(v.number(), v.description('bytes; 0 for a folder')),
      modified: Iso,
    }),
  ),
  truncated: v.pipe(v.number(), v.description('entries left out past the first 5000')),
});
const fileListingMatches: Same<v.InferOutput<typeof FileListingSchema>, FileListing> = true;
void fileListingMatches;

/** The named schemas of the document's `components.schemas`. */
export const SCHEMAS = {
  InstanceStatus: InstanceStatusSchema,
  LastExit: LastExitSchema,
  MaintenanceStatus: MaintenanceStatusSchema,
  AgonesStatus: AgonesStatusSchema,
  Error: ErrorSchema,
  UnknownInstance: UnknownInstanceSchema,
  Health: HealthSchema,
  Logs: LogsSchema,
  DashboardLog: DashboardLogSchema,
  DashboardControl: DashboardControlSchema,
  Backup: BackupSchema,
  ConsoleCommand: ConsoleCommandSchema,
  ConsoleSent: ConsoleSentSchema,
  FileListing: FileListingSchema,
} as const;
export type SchemaName = keyof typeof SCHEMAS;

/**
 * Who may call a route: nobody needs to (`none`); Basic `<key>:<ApiToken>` (`instance`); Basic `<key>:<secret of
 * the current launch>` (`launch`); the dashboard rule, Admin Basic or the loopback while no Admin is configured
 * (`admin`); either of the last two kinds (`instance-or-admin`, the logs route).
 */
export type Access = 'none' | 'instance' | 'launch' | 'admin' | 'instance-or-admin';

export type StatusCode = 200 | 206 | 400 | 401 | 403 | 404 | 405 | 409 | 413 | 416 | 429 | 500 | 503 | 507;

export interface ResponseDoc {
  description: string;
  /** A JSON body of this schema (`list`: an array of it). */
  json?: SchemaName;
  list?: boolean;
  /** A body that is not JSON: its media type. */
  media?: string;
}

export interface QueryDoc {
  name: string;
  description: string;
  type: 'integer' | 'string';
}

export interface RouteDoc {
  method: 'get' | 'post';
  /** The full path as OpenAPI writes it (`{key}`, not `:key`). */
  path: string;
  tag: 'control' | 'check-in' | 'logs' | 'binaries' | 'backups' | 'files' | 'info' | 'dashboard';
  summary: string;
  access: Access;
  query?: readonly QueryDoc[];
  /** A JSON request body of this schema. */
  body?: SchemaName;
  /** A request header the route needs (the dashboard's control header). */
  header?: string;
  responses: Partial<Record<StatusCode, ResponseDoc | string>>;
}

/** The answers every route shares, as README.md "HTTP API" states them; a route lists the codes it can give. */
export const ERRORS = {
  400: 'malformed Authorization header (bad base64 or no colon), or a bad query',
  401: 'credentials missing, not Basic, or wrong (with WWW-Authenticate)',
  403: 'the user is not the instance key in the path, or the dashboard rule refuses',
  404: 'unknown instance',
  405: 'wrong method (with Allow)',
  409: 'refused at once, with the reason (no update provider, no previous build, rollback while updating, shutting down, …)',
  413: 'the request body is too large',
  416: 'the Range starts past the end of the file (with Content-Range: bytes */<size>)',
  429: 'too many requests from this caller; wait a little',
  500: 'the daemon failed to carry it out (the reason says why)',
  503: 'a configured instance the daemon is still starting (with Retry-After: 1)',
  507: 'not enough disk space for it, with the reason',
} as const satisfies Record<Exclude<StatusCode, 200 | 206>, string>;

/** The error answers for `codes`, each with its `{"error": …}` body. */
export function errors(...codes: (keyof typeof ERRORS)[]): Partial<Record<StatusCode, ResponseDoc>> {
  return Object.fromEntries(
    codes.map((code) => [code, { description: ERRORS[code], json: 'Error' } satisfies ResponseDoc]),
  );
}
