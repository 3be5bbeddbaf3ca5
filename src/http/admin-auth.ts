import type { Context, MiddlewareHandler } from 'hono';
import { type Principal, principalName } from '../auth/can.ts';
import { EMPTY_USERS, hasAccounts } from '../auth/users-file.ts';
import { isLoopback } from '../config/listen.ts';
import { decideAccountAccess, isAdminLogin, MALFORMED } from './account-access.ts';
import { parseBasicAuth } from './basic-auth.ts';
import type { HttpDeps } from './deps.ts';
import { reportRefused } from './refused.ts';
import { clientOf } from './request-info.ts';

type Options = Pick<HttpDeps, 'admin' | 'bus' | 'users' | 'sessions' | 'trustedHeaders'>;

/**
 * `adminUser`: the name audit lines give (the user, `key:<id>`, the Admin login; undefined for a loopback client).
 * `principal`: whom can() asks, undefined while there are no accounts (then everything is allowed). `session`: the
 * cookie's session id when that is what let the client in.
 */
export type AdminEnv = {
  Variables: { adminUser: string | undefined; principal: Principal | undefined; session: string | undefined };
};

/** The challenge for the admin routes; its own realm so a browser never offers an instance's credentials. */
export const ADMIN_CHALLENGE = 'Basic realm="watchdog admin", charset="UTF-8"';

/**
 * A Host naming this machine (`localhost`, `*.localhost`, a loopback address). Checked when access rests on the
 * client being local: a page on another site that rebinds its DNS name to 127.0.0.1 sends its own name as Host.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const m = /^(?:\[([^\]]+)\]|([^:]+))(?::\d+)?$/.exec(host.trim());
  const name = (m?.[1] ?? m?.[2] ?? '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || isLoopback(name);
}

type Decision =
  | { ok: true; user: string | undefined; principal?: Principal; session?: string }
  | { ok: false; status: 400 | 401 | 403 | 503; error: string; accounts?: true };

/** The admin routes' rule: with accounts, the account rule; without, the Admin login, or else local clients. */
export async function decideAdminAccess(c: Context, opts: Options): Promise<Decision> {
  const db = opts.users?.() ?? EMPTY_USERS;
  if (hasAccounts(db)) {
    const d = await decideAccountAccess(c, db, opts.admin?.(), opts.sessions, opts.trustedHeaders?.());
    if (!d.ok) return { ...d, accounts: true };
    return { ok: true, user: principalName(d.principal), principal: d.principal, session: d.session };
  }
  const refuse = (status: 401 | 403, error: string): Decision => ({ ok: false, status, error });
  const admin = opts.admin?.();
  if (admin) {
    const creds = parseBasicAuth(c.req.header('authorization'));
    if (creds.kind === 'missing') return refuse(401, 'admin credentials required (Basic auth)');
    if (creds.kind === 'malformed') return MALFORMED;
    if (!isAdminLogin(admin, creds.user, creds.password)) return refuse(401, 'wrong admin user name or password');
    return { ok: true, user: admin.username };
  }
  const client = clientOf(c);
  // Behind a proxy on this machine every client's socket comes from the loopback: a request that names a proxy
  // which is not in TrustedProxies is not taken for a local one.
  if (client.untrustedProxy !== null && isLoopback(client.peer))
    return refuse(
      403,
      `this request came through a proxy on this machine (it sent ${client.untrustedProxy}), so its client is not ` +
        'known to be local; list the proxy in TrustedProxies, or set Admin.Username and Admin.Password',
    );
  // No address (no socket) is refused like a remote client: a missing address must never open the dashboard.
  // From a trusted proxy it is the forwarded client's address that must be local, not the proxy's.
  if (client.address === undefined || !isLoopback(client.address))
    return refuse(
      403,
      'this page is served only to clients on this machine while no Admin is configured; ' +
        'set Admin.Username and Admin.Password (or Admin.PasswordFile) in appsettings.yml to allow remote access',
    );
  // The URL's host is the Host header as @hono/node-server builds it (and `localhost` under app.request()).
  if (!isLoopbackHost(new URL(c.req.url).host))
    return refuse(
      403,
      'without Admin configured, open the dashboard as http://localhost:<port>/ or http://127.0.0.1:<port>/',
    );
  return { ok: true, user: undefined };
}

/** A page a browser navigates to (not a script's request): sent to the login page rather than answered 401. */
const isPageVisit = (c: Context) =>
  c.req.method === 'GET' && c.req.header('sec-fetch-mode') === 'navigate' && !c.req.path.startsWith('/api/');

/**
 * Middleware enforcing `decideAdminAccess`. With accounts, a browser opening a page without a session is sent to
 * `/login`, and a 401 to a browser's script carries no Basic challenge (the login page is the way in).
 */
export function adminAccess(opts: Options): MiddlewareHandler<AdminEnv> {
  return async (c, next) => {
    const d = await decideAdminAccess(c, opts);
    if (!d.ok) {
      reportRefused(opts.bus, c, { route: 'admin', status: d.status, reason: d.error });
      if (d.accounts && d.status === 401 && isPageVisit(c)) return c.redirect('/login', 303);
      const browser = d.accounts && c.req.header('sec-fetch-mode') !== undefined;
      if (d.status === 401 && !browser) c.header('WWW-Authenticate', ADMIN_CHALLENGE);
      if (d.status === 503) c.header('Retry-After', '1');
      return c.json({ error: d.error }, d.status);
    }
    c.set('adminUser', d.user);
    c.set('principal', d.principal);
    c.set('session', d.session);
    await next();
  };
}
