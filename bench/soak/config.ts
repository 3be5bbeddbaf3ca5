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
            Updates: { ManifestUrl: c.manifestUrl, Platform: 'linux-x64', DownloadTimeoutSeconds: 2 },
          }
        : { RunCommand: c.script }),
      Arguments: [
        '--cvar',
        `net.port=${i.port}`,
        '--cvar',
        `watchdog.checkin_interval=${CHECKIN_SECONDS}`,
        '--cvar',
        `soak.run=${c.run}`,
      ],
      EnvironmentVariables: { SOAK_DIR: c.dir, SOAK_LIFETIME_MS: String(c.lifetimeMs) },
    };
  }
  return stringify({
    Urls: `http://127.0.0.1:${c.daemonPort}`,
    Process: { PersistServers: c.persist },
    Notification: { ChatWebhook: c.webhookUrl },
    Serilog: { MinimumLevel: { Default: 'Information' } },
    Timing: TIMING,
    Servers: { InstanceRoot: 'instances', Instances: entries },
  });
}
