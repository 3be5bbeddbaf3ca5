import { stringify } from 'yaml';

/** Every wait of the soak's daemon, shrunk so a one-minute run still sees loops, give-ups and back-off. */
export const TIMING = {
  ShutdownRequestSeconds: 1,
  ShutdownExitSeconds: 1,
  BackoffInitialSeconds: 0.2,
  BackoffMaxSeconds: 2,
  StableRunSeconds: 5,
  StartupFailureLimit: 3,
  WebhookRetries: 2,
  WebhookRetryBaseSeconds: 0.2,
  WebhookTimeoutSeconds: 1,
  RejectedCheckinLogSeconds: 5,
} as const;

export const CHECKIN_SECONDS = 0.5;
export const TOKEN = 'soak-token';

export interface SoakInstance {
  key: string;
  port: number;
  timeoutSeconds: number;
  /** Manifest instances install their build (with the soak server inside) from the loopback CDN. */
  manifest: boolean;
}

export interface SoakConfig {
  daemonPort: number;
  persist: boolean;
  run: string;
  dir: string;
  /** The soak server with an absolute shebang, for the plain instances. */
  script: string;
  manifestUrl: string;
  webhookUrl: string;
  lifetimeMs: number;
  instances: SoakInstance[];
}

export function soakYaml(c: SoakConfig): string {
  const entries: Record<string, unknown> = {};
  for (const i of c.instances) {
    entries[i.key] = {
      ApiToken: TOKEN,
      ApiPort: i.port,
      TimeoutSeconds: i.timeoutSeconds,
      DumpOnTimeout: false,
      ...(i.manifest
        ? {
            UpdateType: 'Manifest',
            // A build is a few kB: 4 MB is a ceiling an endless download (endless-cdn) meets within its 2 s even
            // on a starved machine (at load 15 one got 7 MB in them).
            Updates: {
              ManifestUrl: c.manifestUrl,
              Platform: 'linux-x64',
              DownloadTimeoutSeconds: 2,
              MaxUnpackedMegabytes: ENDLESS_DOWNLOAD_CEILING_MB,
            },
          }
        : { RunCommand: c.script }),
      // Only a server whose config.toml advertises is watched (endless-hub writes one): each hub asked every 2 s.
      Hub: { CheckSeconds: 2, MissingMinutes: 60 },
      Arguments: [
        '--cvar',
        `net.port=${i.port}`,
        '--cvar',
        `watchdog.checkin_interval=${CHECKIN_SECONDS}`,
        '--cvar',
        `soak.run=${c.run}`,
      ],
      EnvironmentVariables: {
        SOAK_DIR: c.dir,
        SOAK_LIFETIME_MS: String(c.lifetimeMs),
        SOAK_CHATTY_BPS: String(CHATTY_BYTES_PER_SECOND),
        SOAK_CHATTY_MS: String(LOGS_REMOVED_CHATTY_MS),
        SOAK_HELPER_LIFETIME_MS: String(ESCAPED_HELPER_LIFETIME_MS),
      },
    };
  }
  return stringify({
    Urls: `http://127.0.0.1:${c.daemonPort}`,
    Process: { PersistServers: c.persist },
    Notification: { ChatWebhook: c.webhookUrl },
    // Server output is the server's, not the daemon's: kept out of daemon.log, whose growth is bounded
    // (DAEMON_LOG_BYTES_PER_MINUTE) against what strangers and faults make the daemon itself say.
    Serilog: {
      MinimumLevel: {
        Default: 'Information',
        Override: Object.fromEntries(c.instances.map((i) => [`watchdog.${i.key}.server`, 'Warning'])),
      },
    },
    // Refused requests are summarised every 5 s instead of 60, so a flood's summaries land within a short soak.
    Timing: { ...TIMING, RefusedRequestLogSeconds: 5 },
    Logs: {
      ServerLogMaxBytes: SERVER_LOG_ROTATION.maxBytes,
      ServerLogFiles: SERVER_LOG_ROTATION.keep,
      AuditLogMaxBytes: AUDIT_ROTATION.maxBytes,
      AuditLogFiles: AUDIT_ROTATION.keep,
    },
    Servers: { InstanceRoot: 'instances', Instances: entries },
  });
}

// ---- The daemon's environment: the faults that strike it and the bounds its logs are held to. ----

/**
 * Size of the small tmpfs the instance root lives on (the disk-full fault fills it, then frees it): room for every
 * instance's logs at their bound (SERVER_LOG_ROTATION) and its builds, so that only the fault fills it.
 */
export const INSTANCE_FS_BYTES = 256 * 1024 * 1024;

/**
 * How server logs are bounded (`instances/<key>/logs/`, `Logs.ServerLog*`): `keep` files of at most `maxBytes`; the
 * logs-bounded invariant holds each file to `maxBytes` + one line. Small, so a chatty server rotates every second
 * and thirty-odd instances at their bound (about 100 MiB) leave the small disk to the disk-full fault.
 */
export const SERVER_LOG_ROTATION = { maxBytes: 1024 * 1024, keep: 3 } as const;

/** Bytes per second a `chatty` soak server prints (so a logs-removed fault reaches a rotation within its run). */
export const CHATTY_BYTES_PER_SECOND = 1024 * 1024;

/** audit.log's rotation (`Logs.AuditLog*`), and what the logs-bounded invariant holds it to. */
export const AUDIT_ROTATION = { maxBytes: 256 * 1024, keep: 3 } as const;

/** The daemon's stderr (daemon.log) may grow at most this much in any minute, whatever strangers send. */
export const DAEMON_LOG_BYTES_PER_MINUTE = 512 * 1024;

/**
 * After an environment fault ends, every instance it struck that was not stopped by request runs again: looked at
 * from RECOVERY_GRACE_MS on, and down for good if not seen running by RECOVERY_PATIENCE_MS later (30 servers
 * starting at once on a loaded two-core machine take that long after a daemon restart).
 */
export const RECOVERY_GRACE_MS = 10_000;
export const RECOVERY_PATIENCE_MS = 15_000;

/** The request flood: at most this many requests with junk credentials, over at most this long, this many at once. */
export const FLOOD = { requests: 5000, maxMs: 4000, concurrency: 32 } as const;

/** Descriptor pressure: the daemon's RLIMIT_NOFILE is set to its open descriptors + `headroom`, then `idle` idle
 * connections (a header byte every `trickleMs`) are held for `holdMs`, then everything is released. */
export const DESCRIPTORS = { headroom: 24, idle: 64, trickleMs: 2000, holdMs: 6000 } as const;

/** A second daemon in the same folder must exit (code 1) within this, never answering on its own port. */
export const SECOND_DAEMON_EXIT_MS = 5000;

/** How long the instance file system stays full, and how long a chatty server runs after its logs/ is removed. */
export const DISK_FULL_MS: [number, number] = [3000, 6000];
export const LOGS_REMOVED_CHATTY_MS = 14_000;
/** How long a running server's server.log stays a named pipe. */
export const FIFO_LOG_MS: [number, number] = [3000, 6000];
/** How long a server answering an endless /status is left to the daemon's sampler before the fault ends. */
export const ENDLESS_STATUS_MS = 12_000;

/** How long a named pipe stands where a configuration layer or a shared file is expected (fifo-config, fifo-shared). */
export const FIFO_CONFIG_MS: [number, number] = [3000, 5000];
/** How long a hub answers without end to the hub watch of a relaunched server (endless-hub). */
export const ENDLESS_HUB_MS = 8000;
/** Updates.MaxUnpackedMegabytes of the Manifest instances: where an endless download (endless-cdn) must stop. */
export const ENDLESS_DOWNLOAD_CEILING_MB = 4;
/** How far the daemon's wall clock steps (clock-step), either way. */
export const CLOCK_STEP_MS = 3_600_000;

/** How long a helper that escaped its server's session lives at most (its own leak guard). */
export const ESCAPED_HELPER_LIFETIME_MS = 30_000;
