import * as v from 'valibot';
import { isMap } from './merge.ts';
import { amount, httpUrl, MAX_SECONDS, Port, seconds, TOO_LONG, text } from './numbers.ts';
import { AgonesSchema } from './sections/agones.ts';
import { AnswersSchema } from './sections/answers.ts';
import { BackupsSchema, RetentionSchema } from './sections/backups.ts';
import { ConnectionsSchema } from './sections/connections.ts';
import { ConsoleSchema, HubSchema } from './sections/console-hub.ts';
import { DiskSchema } from './sections/disk.ts';
import { FilesSchema } from './sections/files.ts';
import { LimitsSchema } from './sections/limits.ts';
import { LogsSchema } from './sections/logs.ts';
import { MaintenanceSchema } from './sections/maintenance.ts';
import { NotificationSchema } from './sections/notification.ts';
import { TrustedProxiesSchema } from './sections/proxy.ts';
import { UsersSchema } from './sections/users.ts';

/** Instance keys appear in paths and URLs: keep them to a safe, boring alphabet. */
export const INSTANCE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const Url = httpUrl('expected an http(s) URL such as http://localhost:5000/');
const Str = (what = 'a string') => v.string(`expected ${what}`);
/** A YAML mapping; v.record alone would accept a list (its indices become keys). */
const Mapping = (message: string) => v.custom<Record<string, unknown>>(isMap, message);
/** Accepted because the real watchdog accepts it, ignored here; load.ts turns its presence into a warning. */
const Ignored = v.optional(v.unknown());

export const UPDATE_TYPES = ['Manifest', 'Git', 'CiServer', 'Local', 'Dummy'] as const;
/** `Jenkins` is the real watchdog's name for `CiServer`; either may be written, and both mean `CiServer`. */
const UPDATE_TYPE_NAMES = [...UPDATE_TYPES, 'Jenkins'] as const;
export type UpdateType = (typeof UPDATE_TYPES)[number];
export const DUMP_TYPES = ['Normal', 'WithHeap', 'Triage', 'Full'] as const;

/** Provider settings. Which keys are required depends on UpdateType; that check lives in checks.ts. */
export const UpdatesSchema = v.strictObject(
  {
    // Manifest
    ManifestUrl: v.optional(Url),
    // Each part is optional, as in the real watchdog; the Basic header is only sent when both are set.
    Authentication: v.optional(
      v.strictObject(
        { Username: v.optional(Str('a user name')), Password: v.optional(Str('a password')) },
        'expected a map with Username and Password',
      ),
    ),
    // Git and CiServer
    BaseUrl: v.optional(v.string('expected a URL or a local path')),
    Branch: v.optional(Str('a branch name'), 'master'),
    HybridACZ: v.optional(v.boolean('expected true or false'), true),
    BuildCommand: v.optional(Str()),
    Artifact: v.optional(Str()),
    ClientArtifact: v.optional(Str()),
    // CiServer
    JobName: v.optional(Str()),
    ArtifactPattern: v.optional(Str()),
    // Local
    CurrentVersion: v.optional(Str()),
    ClientZip: v.optional(Str()),
    // Install pipeline
    DownloadTimeoutSeconds: seconds(120),
    // The most a manifest or a CI server's JSON answer may be; one answering more is cut off there.
    MaxManifestMegabytes: v.optional(amount('megabytes', { positive: true }), 32),
    Platform: v.optional(Str()),
    // Disk space: kept free beyond a build's declared size, and the most any archive may unpack to.
    SpaceMarginMegabytes: v.optional(amount('megabytes', { min: 0 }), 64),
    MaxUnpackedMegabytes: v.optional(amount('megabytes', { positive: true }), 20_000),
  },
  'expected a map of provider settings',
);

export const InstanceSchema = v.strictObject(
  {
    Name: v.optional(v.string('expected a string')),
    ApiToken: v.optional(v.pipe(v.string('expected a token'), v.minLength(1, 'expected a non-empty token'))),
    ApiTokenFile: v.optional(v.string('expected a file path')),
    ApiPort: Port,
    UpdateType: v.optional(
      v.pipe(
        v.picklist(UPDATE_TYPE_NAMES, `expected one of ${UPDATE_TYPE_NAMES.join(', ')}`),
        v.transform((t): UpdateType => (t === 'Jenkins' ? 'CiServer' : t)),
      ),
    ),
    Updates: v.optional(UpdatesSchema, {}),
    TimeoutSeconds: seconds(90),
    DumpOnTimeout: v.optional(v.boolean('expected true or false'), true),
    TimeoutDumpType: v.optional(v.picklist(DUMP_TYPES, `expected one of ${DUMP_TYPES.join(', ')}`), 'Normal'),
    RunCommand: v.optional(text('a program path')),
    Arguments: v.optional(v.array(v.string('expected a string'), 'expected a list of strings'), []),
    EnvironmentVariables: v.optional(
      v.pipe(Mapping('expected a map of names to strings'), v.record(v.string(), v.string('expected a value'))),
      {},
    ),
    Maintenance: v.optional(MaintenanceSchema),
    Backups: v.optional(BackupsSchema, {}),
    Retention: v.optional(RetentionSchema, {}),
    Console: ConsoleSchema,
    Hub: HubSchema,
    Files: FilesSchema,
    /** The soft limit: a process tree over it restarts by its `Maintenance.When` (`Limits` is the hard one). */
    MemoryLimitMB: v.optional(amount('megabytes', { positive: true })),
    Limits: LimitsSchema,
  },
  'expected a map of instance settings',
);

/** Every wait the daemon makes, configurable so tests can shrink them. Defaults are the production values. */
export const TimingSchema = v.strictObject(
  {
    ShutdownRequestSeconds: seconds(5),
    ShutdownExitSeconds: seconds(5),
    BackoffInitialSeconds: seconds(1),
    BackoffMaxSeconds: seconds(60),
    StableRunSeconds: seconds(60),
    StartupFailureLimit: v.optional(amount('failed starts', { whole: true, min: 1 }), 3),
    WebhookRetries: v.optional(amount('retries', { whole: true, min: 0 }), 3),
    WebhookRetryBaseSeconds: seconds(1, { min: 0 }),
    WebhookTimeoutSeconds: seconds(10),
    DumpTimeoutSeconds: seconds(60),
    RejectedCheckinLogSeconds: seconds(60, { min: 0 }),
    /** How often a pending `When: Empty` maintenance action reads the server's player count. */
    MaintenancePollSeconds: seconds(5),
    /** While a server's log cannot be written (full disk, removed folder), how often to try it again. */
    LogRetrySeconds: seconds(5),
    /** After a source's first refused request is logged in full, one summary line per this long. */
    RefusedRequestLogSeconds: seconds(60),
    /** How long killing what a launch left (its cgroup, its marked processes) and freeing its game port may take. */
    StragglerKillSeconds: seconds(5),
    /** While a server runs, how often its CPU, memory and player count are read for the status and metrics. */
    ResourceSampleSeconds: seconds(5),
    /** Update checks that have failed for this long get one chat notice (`update-check`); 0: at the first failure. */
    UpdateCheckAlertMinutes: v.optional(amount('minutes', { min: 0, max: MAX_SECONDS / 60, tooBig: TOO_LONG }), 60),
  },
  'expected a map of timings',
);

export const AppSettingsSchema = v.strictObject(
  {
    BaseUrl: v.optional(Url),
    Urls: v.optional(v.string('expected a URL such as http://localhost:5000'), 'http://localhost:5000'),
    TrustedProxies: TrustedProxiesSchema,
    // The ASP.NET host's own sections, so a real watchdog's files load. What is not acted on is named in one warning.
    AllowedHosts: v.optional(Str()),
    Kestrel: Ignored,
    Logging: Ignored,
    // Serilog: the minimum level and the overrides that name our log scopes are used; sinks (Loki, …) are not.
    Serilog: v.optional(
      v.looseObject(
        {
          MinimumLevel: v.optional(
            v.union(
              [
                v.string(),
                v.looseObject({
                  Default: v.optional(Str('a level name')),
                  Override: v.optional(
                    v.pipe(
                      Mapping('expected a map of log scopes to level names'),
                      v.record(v.string(), Str('a level name')),
                    ),
                  ),
                }),
              ],
              'expected a level name such as Information, or a map with Default',
            ),
          ),
        },
        'expected a map of logging settings',
      ),
    ),
    // The real watchdog's SQLite file: read once per instance to import its revision (and a persisted server).
    Data: v.optional(
      v.strictObject(
        {
          File: v.optional(text('a file path'), 'data.db'),
        },
        'expected a map with File',
      ),
      {},
    ),
    Notification: v.optional(NotificationSchema, {}),
    Users: v.optional(UsersSchema, {}),
    Process: v.optional(
      v.strictObject(
        {
          PersistServers: v.optional(v.boolean('expected true or false'), false),
          // Systemd is accepted so a real watchdog's config loads; servers still run as our own child processes.
          Mode: v.optional(v.picklist(['Basic', 'Systemd'], 'expected Basic or Systemd')),
          // How a launch's processes are found and ended: Auto (a cgroup per launch where possible) or Environment.
          Tracking: v.optional(v.picklist(['Auto', 'Environment'], 'expected Auto or Environment'), 'Auto'),
          UnitManagementMode: Ignored,
          UnitPrefix: Ignored,
          Manager: Ignored,
        },
        'expected a map of process settings',
      ),
      {},
    ),
    Admin: v.optional(
      v.strictObject(
        {
          Username: Str('a user name'),
          Password: v.optional(Str('a password')),
          PasswordFile: v.optional(Str('a file path')),
        },
        'expected a map with Username and Password or PasswordFile',
      ),
    ),
    Timing: v.optional(TimingSchema, {}),
    Logs: v.optional(LogsSchema, {}),
    Connections: v.optional(ConnectionsSchema, {}),
    Agones: v.optional(AgonesSchema, {}),
    Disk: v.optional(DiskSchema, {}),
    Answers: v.optional(AnswersSchema, {}),
    Servers: v.strictObject(
      {
        InstanceRoot: v.optional(text('a folder path'), 'instances'),
        Instances: v.pipe(
          Mapping('expected a map of instance id to instance settings'),
          v.record(
            v.pipe(
              v.string(),
              v.regex(
                INSTANCE_KEY,
                'expected an instance id of letters, digits, "_", "." and "-" (at most 64, starting with a letter or digit)',
              ),
            ),
            InstanceSchema,
          ),
        ),
      },
      'expected a map with Instances',
    ),
  },
  'expected a map of settings',
);

export type AppSettings = v.InferOutput<typeof AppSettingsSchema>;
export type InstanceSettings = v.InferOutput<typeof InstanceSchema>;
export type UpdatesSettings = v.InferOutput<typeof UpdatesSchema>;
export type TimingSettings = v.InferOutput<typeof TimingSchema>;
