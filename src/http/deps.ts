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
import type { RecentEvents } from './dashboard/recent-events.ts';

/** What every route module receives from `createApp`. */
export interface HttpDeps {
  registry: InstanceRegistry;
  bus: Bus;
  log: Logger;
  version: string;
  /**
   * `Admin` credentials for the dashboard, `/events`, `/metrics` and `/api/*`, read per request so a config reload
   * applies; absent or returning undefined → only loopback clients are served.
   */
  admin?: () => AdminCredentials | undefined;
  /** The users file in force (accounts and API keys), read per request; absent → no accounts. */
  users?: () => UsersDb;
  /** The users file the user routes edit (`Users.File`); absent → they answer 409. */
  usersFile?: string;
  /** Reads the users file again now, so a change made over HTTP is in force when its answer is sent. */
  reloadUsers?: () => Promise<void>;
  /** The dashboard's login sessions; `createApp` makes a store with the default settings when absent. */
  sessions?: SessionStore;
  /** Single sign-on's headers (`Users.TrustedHeaders`), read per request; absent or undefined → off. */
  trustedHeaders?: () => TrustedHeaders | undefined;
  /** Dashboard login through an OpenID Connect provider (`Users.Oidc`); absent → off. */
  oidc?: OidcLogin;
  /** Limits on login attempts; `createApp` makes them with the default settings when absent. */
  loginLimits?: LoginLimits;
  /** `Users.SessionMinutes`, read when a login sets its cookie (the cookie's Max-Age); 720 when absent. */
  sessionMinutes?: () => number;
  /** The Prometheus collector; `createApp` makes one subscribed to `bus` when absent. */
  metrics?: MetricsCollector;
  /** The facts the dashboard's `hello` lists; `createApp` starts recording when absent. */
  recent?: RecentEvents;
  /** `TrustedProxies`, read per request (request-info.ts); absent → no proxy is trusted. */
  trustedProxies?: () => readonly string[];
  /** The daemon's own origins (`BaseUrl`, the bound addresses): an `Origin` naming one is not cross-site. */
  ownOrigins?: () => readonly string[];
  /** The disk watcher's last readings (src/daemon/disk-watch.ts), for `/health` and the dashboard; none when absent. */
  disk?: () => DiskReading[];
  /** Told of the connection of each accepted check-in: the connection guard never evicts it (connection-guard.ts). */
  trustCheckin?: (socket: Socket) => void;
}
