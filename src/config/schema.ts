import * as v from 'valibot';

/** Instance keys appear in paths and URLs: keep them to a safe, boring alphabet. */
export const INSTANCE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const Url = v.pipe(v.string('expected a URL string'), v.url('expected an absolute URL such as http://localhost:5000/'));
const Port = v.pipe(
  v.number('expected an integer 1-65535'),
  v.integer('expected an integer 1-65535'),
  v.minValue(1, 'expected an integer 1-65535'),
  v.maxValue(65535, 'expected an integer 1-65535'),
);
/** Seconds; fractions are allowed so tests can shrink every wait. */
const Seconds = (def: number) =>
  v.optional(v.pipe(v.number('expected a number of seconds'), v.gtValue(0, 'expected a positive number of seconds')), def);
const NonNegSeconds = (def: number) =>
  v.optional(v.pipe(v.number('expected a number of seconds'), v.minValue(0, 'expected zero or more seconds')), def);

export const UPDATE_TYPES = ['Manifest', 'Git', 'CiServer', 'Local', 'Dummy'] as const;
export const DUMP_TYPES = ['Normal', 'WithHeap', 'Triage', 'Full'] as const;

/** Provider settings. Which keys are required depends on UpdateType; that check lives in validate.ts. */
export const UpdatesSchema = v.strictObject({
  // Manifest
  ManifestUrl: v.optional(Url),
  Authentication: v.optional(v.strictObject({ Username: v.string(), Password: v.string() })),
  // Git and CiServer
  BaseUrl: v.optional(v.string('expected a URL or a local path')),
  Branch: v.optional(v.string(), 'master'),
  HybridACZ: v.optional(v.boolean('expected true or false'), true),
  BuildCommand: v.optional(v.string()),
  Artifact: v.optional(v.string()),
  ClientArtifact: v.optional(v.string()),
  // CiServer
  JobName: v.optional(v.string()),
  ArtifactPattern: v.optional(v.string()),
  // Local
  CurrentVersion: v.optional(v.string()),
  ClientZip: v.optional(v.string()),
  // Install pipeline
  DownloadTimeoutSeconds: Seconds(120),
  Platform: v.optional(v.string()),
});

export const InstanceSchema = v.strictObject({
  Name: v.optional(v.string('expected a string')),
  ApiToken: v.optional(v.pipe(v.string('expected a string'), v.minLength(1, 'expected a non-empty token'))),
  ApiTokenFile: v.optional(v.string('expected a file path')),
  ApiPort: Port,
  UpdateType: v.optional(v.picklist(UPDATE_TYPES, `expected one of ${UPDATE_TYPES.join(', ')}`)),
  Updates: v.optional(UpdatesSchema, {}),
  TimeoutSeconds: Seconds(90),
  DumpOnTimeout: v.optional(v.boolean('expected true or false'), true),
  TimeoutDumpType: v.optional(v.picklist(DUMP_TYPES, `expected one of ${DUMP_TYPES.join(', ')}`), 'Normal'),
  RunCommand: v.optional(v.pipe(v.string('expected a program path'), v.minLength(1, 'expected a program path'))),
  Arguments: v.optional(v.array(v.string('expected a string'), 'expected a list of strings'), []),
  EnvironmentVariables: v.optional(v.record(v.string(), v.string('expected a string value'), 'expected a map of strings'), {}),
});

/** Every wait the daemon makes, configurable so tests can shrink them. Defaults are the production values. */
export const TimingSchema = v.strictObject({
  ShutdownRequestSeconds: Seconds(5),
  ShutdownExitSeconds: Seconds(5),
  BackoffInitialSeconds: Seconds(1),
  BackoffMaxSeconds: Seconds(60),
  StableRunSeconds: Seconds(60),
  StartupFailureLimit: v.optional(v.pipe(v.number(), v.integer('expected a whole number'), v.minValue(1, 'expected at least 1')), 3),
  WebhookRetries: v.optional(v.pipe(v.number(), v.integer('expected a whole number'), v.minValue(0, 'expected 0 or more')), 3),
  WebhookRetryBaseSeconds: NonNegSeconds(1),
  WebhookTimeoutSeconds: Seconds(10),
  DumpTimeoutSeconds: Seconds(60),
  RejectedCheckinLogSeconds: NonNegSeconds(60),
});

export const AppSettingsSchema = v.strictObject({
  BaseUrl: v.optional(Url),
  Urls: v.optional(v.string('expected a URL such as http://localhost:5000'), 'http://localhost:5000'),
  AllowedHosts: v.optional(v.string()),
  Serilog: v.optional(v.looseObject({
    MinimumLevel: v.optional(v.union([
      v.string(),
      v.looseObject({ Default: v.optional(v.string()) }),
    ])),
  })),
  Notification: v.optional(v.strictObject({
    ChatWebhook: v.optional(Url),
  }), {}),
  Process: v.optional(v.strictObject({
    PersistServers: v.optional(v.boolean('expected true or false'), false),
    Mode: v.optional(v.picklist(['Basic'], 'only Basic is supported')),
  }), {}),
  Admin: v.optional(v.strictObject({
    Username: v.string('expected a user name'),
    Password: v.optional(v.string()),
    PasswordFile: v.optional(v.string()),
  })),
  Timing: v.optional(TimingSchema, {}),
  Servers: v.strictObject({
    InstanceRoot: v.optional(v.string('expected a folder path'), 'instances'),
    Instances: v.record(
      v.pipe(v.string(), v.regex(INSTANCE_KEY, 'instance keys may use letters, digits, "_", "." and "-" (max 64, not starting with a symbol)')),
      InstanceSchema,
      'expected a map of instance id to instance settings',
    ),
  }, 'expected an object with Instances'),
});

export type AppSettings = v.InferOutput<typeof AppSettingsSchema>;
export type InstanceSettings = v.InferOutput<typeof InstanceSchema>;
export type UpdatesSettings = v.InferOutput<typeof UpdatesSchema>;
export type TimingSettings = v.InferOutput<typeof TimingSchema>;
export type UpdateType = (typeof UPDATE_TYPES)[number];
