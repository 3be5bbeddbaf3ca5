import type { Context, MiddlewareHandler } from 'hono';
import { parseBearer } from '../auth/api-keys.ts';
import { can, type Principal, principalName } from '../auth/can.ts';
import type { Permission } from '../auth/permissions.ts';
import { EMPTY_USERS, hasAccounts, type UsersDb } from '../auth/users-file.ts';
import { sameSecret } from '../kit/api-watchdog.ts';
import type { InstanceControl, InstanceRegistry } from '../supervisor/contract.ts';
import { keyAccess, passwordAccess } from './account-access.ts';
import { parseBasicAuth, WWW_AUTHENTICATE } from './basic-auth.ts';
import type { HttpDeps } from './deps.ts';
import { reportRefused } from './refused.ts';
import { remoteAddress, shownKey } from './request-info.ts';
import { type InstanceRoute, permissionsOf } from './route-permissions.ts';

/** The Hono environment of routes behind an instance's credentials: the instance and the user the header named. */
export type InstanceEnv = { Variables: { instance: InstanceControl; user: string } };

export type AuthStatus = 400 | 401 | 403 | 404 | 503;

export type AuthResult =
  | { ok: true; user: string; instance: InstanceControl }
  /** `permission`: the right a known principal lacks (a 403 names it). */
  | { ok: false; status: AuthStatus; user: string | undefined; reason: string; permission?: Permission };

/** Why a password is refused: no secret to match, or another one. */
const NO_MATCH = {
  apiToken: ['instance has no ApiToken', 'wrong token'],
  checkinSecret: ['no server running', 'stale or wrong token'],
} as const;

/**
 * The decision order of README.md "HTTP API", exactly: no/non-Basic header → 401 (on ping too, not the real
 * watchdog's 400); bad base64 or no colon → 400; user ≠ key → 403 (the real watchdog's `Forbid()` ends in 500);
 * unknown instance → 404 (503 while still starting); wrong password → 401. Reasons never contain the password.
 */
export function authorize(
  header: string | undefined,
  key: string,
  registry: InstanceRegistry,
  credential: 'apiToken' | 'checkinSecret',
): AuthResult {
  const creds = parseBasicAuth(header);
  if (creds.kind === 'missing')
    return { ok: false, status: 401, user: undefined, reason: 'malformed header: missing or not Basic' };
  if (creds.kind === 'malformed')
    return { ok: false, status: 400, user: undefined, reason: 'malformed header: not base64 of user:password' };
  const { user, password } = creds;
  if (user !== key) return { ok: false, status: 403, user, reason: 'user does not match the instance key' };
  const found = instanceFor(key, registry, user);
  if (!found.ok) return found;
  const { instance } = found;
  const expected = credential === 'apiToken' ? instance.apiToken() : instance.checkinSecret();
  const [none, wrong] = NO_MATCH[credential];
  if (expected === undefined || !sameSecret(password, expected))
    return { ok: false, status: 401, user, reason: expected === undefined ? none : wrong };
  return { ok: true, user, instance };
}

/** The answer to failed credentials: a 401 carries the Basic challenge, a refusal for want of a right names it. */
export function denied(c: Context, status: AuthStatus, reason: string, permission?: Permission): Response {
  if (status === 401) c.header('WWW-Authenticate', WWW_AUTHENTICATE);
  if (status === 503) c.header('Retry-After', '1');
  return c.json(permission === undefined ? { error: reason } : { error: reason, permission }, status);
}

/** The instance `key` names, or the refusal `authorize` gives for an unknown or still starting one. */
export function instanceFor(key: string, registry: InstanceRegistry, user: string): AuthResult {
  const instance = registry.get(key);
  if (instance) return { ok: true, user, instance };
  if (registry.starting?.(key))
    return { ok: false, status: 503, user, reason: 'instance still starting; retry in a moment' };
  return { ok: false, status: 404, user, reason: 'unknown instance' };
}

/** Another instance's key that is no user's name: its ApiToken on this route is refused as it always was (403). */
const otherToken = (name: string, db: UsersDb, deps: Pick<HttpDeps, 'registry'>): boolean =>
  !db.users.has(name) && (deps.registry.get(name) !== undefined || deps.registry.starting?.(name) === true);

/**
 * Who the header speaks for on `key`'s route, and whether can() lets them use `permissions` there. Without accounts
 * this is `authorize` with the ApiToken. With accounts: a Bearer key, or Basic `<user>:<password>` of a user whose
 * name is not the instance key (that name stays the ApiToken's); unknown or wrong → 401; lacking the right → 403.
 */
export async function authorizeFor(
  header: string | undefined,
  key: string,
  deps: Pick<HttpDeps, 'registry' | 'users'>,
  permissions: readonly Permission[],
): Promise<AuthResult> {
  const db = deps.users?.() ?? EMPTY_USERS;
  let principal: Principal | undefined;
  if (hasAccounts(db)) {
    const bearer = parseBearer(header);
    const creds = bearer === undefined ? parseBasicAuth(header) : undefined;
    const asUser = creds?.kind === 'ok' && creds.user !== key && db.users.size > 0 && !otherToken(creds.user, db, deps);
    const access =
      bearer !== undefined
        ? keyAccess(bearer, db)
        : asUser
          ? await passwordAccess(creds.user, creds.password, db)
          : undefined;
    if (access?.ok === false)
      return { ok: false, status: access.status, user: asUser ? creds.user : undefined, reason: access.error };
    principal = access?.principal;
  }
  const result =
    principal === undefined
      ? authorize(header, key, deps.registry, 'apiToken')
      : instanceFor(key, deps.registry, principalName(principal));
  if (!result.ok) return result;
  const who: Principal = principal ?? { kind: 'instance-token', instance: key };
  const permission = permissions.find((p) => !can(who, p, key, db));
  if (permission !== undefined) {
    const reason = `${principalName(who)} may not ${permission} on ${shownKey(key)}`;
    return { ok: false, status: 403, user: result.user, reason, permission };
  }
  return result;
}

/** Sets `c.var.instance` and `c.var.user`, or answers the denial after telling `onRefused`. */
function instanceAuth(
  deps: Pick<HttpDeps, 'registry' | 'users'>,
  credential: 'checkinSecret' | InstanceRoute,
  onRefused: (c: Context, key: string, denial: Extract<AuthResult, { ok: false }>) => void,
): MiddlewareHandler<InstanceEnv> {
  return async (c, next) => {
    const key = c.req.param('key') ?? '';
    const header = c.req.header('authorization');
    const auth =
      credential === 'checkinSecret'
        ? authorize(header, key, deps.registry, credential)
        : await authorizeFor(
            header,
            key,
            deps,
            permissionsOf(credential, (name) => c.req.query(name)),
          );
    if (!auth.ok) {
      onRefused(c, key, auth);
      return denied(c, auth.status, auth.reason, auth.permission);
    }
    c.set('instance', auth.instance);
    c.set('user', auth.user);
    await next();
  };
}

/**
 * The instance's `ApiToken`, or a user or key holding the permission of `row`. A refusal goes on the bus as
 * `daemon:request-refused`, which the audit and the daemon's log rate-limit by source.
 */
export function apiToken(
  deps: Pick<HttpDeps, 'registry' | 'bus' | 'users'>,
  route: 'control' | 'status',
  row: InstanceRoute,
): MiddlewareHandler<InstanceEnv> {
  // The action is the verb of `/instances/:key/<verb>`.
  return instanceAuth(deps, row, (c, key, r) =>
    reportRefused(deps.bus, c, { ...r, route, action: c.req.path.slice(c.req.path.lastIndexOf('/') + 1), key }),
  );
}

/**
 * The check-in secret of the instance's current launch; a refusal goes on the bus as `instance:checkin-rejected`.
 * A server the previous daemon left may check in while its instance is still starting (503): not a fault.
 */
export function checkinSecret(deps: Pick<HttpDeps, 'registry' | 'bus'>): MiddlewareHandler<InstanceEnv> {
  return instanceAuth(deps, 'checkinSecret', (c, key, r) => {
    if (r.status === 503) return;
    deps.bus.emit('instance:checkin-rejected', {
      key: shownKey(key),
      reason: r.reason,
      remote: remoteAddress(c),
      at: Date.now(),
    });
  });
}
