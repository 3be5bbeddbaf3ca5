import type { LogLevel } from '../log.ts';
import type { ListenAddress } from './listen.ts';
import type { AppSettings, InstanceSettings, TimingSettings } from './schema.ts';
import type { AgonesConfig } from './sections/agones.ts';

export type { LogLevel };

/** One instance after validation, with every path made absolute and its token read. */
export interface ResolvedInstance {
  key: string;
  /** `Name`, or the key when none is set. */
  name: string;
  /** Absolute `instances/<key>` (or `Servers.InstanceRoot/<key>`), resolved against the working directory. */
  dir: string;
  /** From `ApiToken` or `ApiTokenFile` (trailing newline trimmed); undefined refuses all control requests. */
  apiToken: string | undefined;
  /** Absolute program path: `RunCommand` joined to `dir` (absolute stays absolute). */
  program: string;
  settings: InstanceSettings;
}

/** The daemon's configuration after layering, validation and resolution. */
export interface ResolvedConfig {
  /** Files read, in the order they were layered. */
  files: string[];
  /** Folder relative paths resolve against (the daemon's working directory). */
  workDir: string;
  /** Where the HTTP server binds, from `Urls` (every address; see listen.ts). Port 0 picks a free port. */
  listen: ListenAddress[];
  /** `BaseUrl` when configured (always ends with `/`); otherwise undefined and derived from the bound address. */
  baseUrl: string | undefined;
  persistServers: boolean;
  /** Absolute `Data.File` (default `data.db`): the real watchdog's SQLite file, imported from when present. */
  dataFile: string;
  /** Absolute `Users.File`, or `users.yml` beside the main configuration file: accounts and API keys. */
  usersFile: string;
  webhook: string | undefined;
  logLevel: LogLevel;
  /** Levels for our own log scopes (`Serilog.MinimumLevel.Override`), `:`-separated scope prefixes. */
  logOverrides: Array<[scope: string, level: LogLevel]>;
  timing: TimingSettings;
  admin: { username: string; password: string } | undefined;
  /** What `Users.Oidc.ClientSecretFile` holds; undefined without it (never logged). */
  oidcClientSecret?: string;
  /** Agones mode (the daemon wraps its one instance for an Agones GameServer), or null when it is off. */
  agones: AgonesConfig | null;
  instances: ResolvedInstance[];
  settings: AppSettings;
}
