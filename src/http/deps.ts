import type { Socket } from 'node:net';
import type { LoginLimits } from '../auth/login-limits.ts';
import type { OidcLogin } from '../auth/oidc.ts';
import type { SessionStore } from '../auth/sessions.ts';
import type { UsersDb } from '../auth/users-file.ts';
import type { Bus, DiskReading } from '../bus.ts';
import type { Logger } from '../log.ts';
import type { MetricsCollector } from '../metrics/collector.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { AdminCredentials, TrustedHeaders } from './account-access.ts';
import type { recordRecentEvents } from './dashboard/recent-events.ts';

/** What every route module receives from `createApp`. Getters are read per request, so a config reload applies. */
export interface HttpDeps {
  registry: InstanceRegistry;
  bus: Bus;
  log: Logger;
  version: string;
  /** `Admin` credentials for the dashboard, `/events`, `/metrics` and `/api/*`; none → loopback clients only. */
  admin?: () => AdminCredentials | undefined;
  /** The users file in force (accounts and API keys); absent → no accounts. */
  users?: () => UsersDb;
  /** The users file the user routes edit (`Users.File`); absent → they answer 409. */
  usersFile?: string;
  /** Reads the users file again now, so a change made over HTTP is in force when its answer is sent. */
  reloadUsers?: () => Promise<void>;
  /** Made with the default settings when absent, as are `loginLimits`, `metrics` and `recent`. */
  sessions?: SessionStore;
  /** `Users.TrustedHeaders` (single sign-on); absent → off. */
  trustedHeaders?: () => TrustedHeaders | undefined;
  /** `Users.Oidc`; absent → off. */
  oidc?: OidcLogin;
  loginLimits?: LoginLimits;
  /** `Users.SessionMinutes`, the session cookie's Max-Age; 720 when absent. */
  sessionMinutes?: () => number;
  metrics?: MetricsCollector;
  recent?: ReturnType<typeof recordRecentEvents>;
  /** `TrustedProxies`; absent → no proxy is trusted. */
  trustedProxies?: () => readonly string[];
  /** The daemon's own origins (`BaseUrl`, the bound addresses): an `Origin` naming one is not cross-site. */
  ownOrigins?: () => readonly string[];
  /** The disk watcher's last readings, for `/health` and the dashboard. */
  disk?: () => DiskReading[];
  /** Told of each accepted check-in's connection, which the connection guard then never evicts. */
  trustCheckin?: (socket: Socket) => void;
}
