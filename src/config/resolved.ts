import type { LogLevel } from '../log.ts';
import type { ListenAddress } from './listen.ts';
import type { AppSettings, InstanceSettings, TimingSettings } from './schema.ts';
import type { AgonesConfig } from './sections/agones.ts';

export type { LogLevel };

/** One instance after validation, with every path made absolute and its token read. */
export interface ResolvedInstance {
  key: string;
  name: string;
  /** Absolute `Servers.InstanceRoot/<key>`. */
  dir: string;
  /** From `ApiToken` or `ApiTokenFile`; undefined refuses all control requests. */
  apiToken: string | undefined;
  /** Absolute: `RunCommand` against `dir`. */
  program: string;
  settings: InstanceSettings;
}

/** The daemon's configuration after layering, validation and resolution. */
export interface ResolvedConfig {
  /** Files read, in the order they were layered. */
  files: string[];
  /** The daemon's working directory, against which relative paths resolve. */
  workDir: string;
  listen: ListenAddress[];
  /** `BaseUrl` ending with `/`; undefined: derived from the bound address. */
  baseUrl: string | undefined;
  persistServers: boolean;
  /** Absolute `Data.File`: the real watchdog's SQLite file, imported from when present. */
  dataFile: string;
  /** Absolute `Users.File`, or `users.yml` beside the main configuration file. */
  usersFile: string;
  webhook: string | undefined;
  logLevel: LogLevel;
  /** `Serilog.MinimumLevel.Override` for our scopes, as `:`-separated prefixes. */
  logOverrides: Array<[scope: string, level: LogLevel]>;
  timing: TimingSettings;
  admin: { username: string; password: string } | undefined;
  /** What `Users.Oidc.ClientSecretFile` holds; undefined without it (never logged). */
  oidcClientSecret?: string;
  /** Agones mode, or null when it is off. */
  agones: AgonesConfig | null;
  instances: ResolvedInstance[];
  settings: AppSettings;
}
