import type { Context, MiddlewareHandler } from 'hono';
import type { InstanceControl } from '../supervisor/contract.ts';
import { type AuthResult, authorize, type Credential, refusal } from './authorize.ts';
import type { HttpDeps } from './deps.ts';
import { reportRefused } from './refused.ts';
import { remoteAddress, shownKey } from './request-info.ts';

/** The Hono environment of routes behind an instance's credentials: the instance and the user the header named. */
export type InstanceEnv = { Variables: { instance: InstanceControl; user: string } };

type Refusal = Extract<AuthResult, { ok: false }>;

/**
 * Checks Basic `<key>:<secret>` against the instance the route's `:key` names (authorize.ts gives the order of the
 * checks) and sets `c.var.instance` and `c.var.user`; a refusal is answered here, after `onRefused` is told.
 * Put in front of each handler rather than under a prefix: the sub-apps share `/instances`, where a prefix
 * middleware would also guard the unauthenticated `binaries/` files.
 */
function instanceAuth(
  deps: Pick<HttpDeps, 'registry'>,
  credential: Credential,
  onRefused: (c: Context, key: string, refused: Refusal) => void,
): MiddlewareHandler<InstanceEnv> {
  return async (c, next) => {
    const key = c.req.param('key') ?? '';
    const auth = authorize(c.req.header('authorization'), key, deps.registry, credential);
    if (!auth.ok) {
      onRefused(c, key, auth);
      return refusal(c, auth.status, auth.reason);
    }
    c.set('instance', auth.instance);
    c.set('user', auth.user);
    await next();
  };
}

/** The last segment of the path: the verb of `/instances/:key/<verb>`. */
const lastSegment = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * The instance's `ApiToken`, for control and status. A refusal is a `request:refused` under `route`: anyone can
 * send these, as fast as they like, so the audit and the daemon's log rate-limit them by source (refused.ts).
 */
export function apiToken(
  deps: Pick<HttpDeps, 'registry' | 'bus'>,
  route: 'control' | 'status',
): MiddlewareHandler<InstanceEnv> {
  return instanceAuth(deps, 'apiToken', (c, key, r) =>
    reportRefused(deps.bus, c, {
      route,
      action: lastSegment(c.req.path),
      key,
      user: r.user,
      status: r.status,
      reason: r.reason,
    }),
  );
}

/**
 * The check-in secret of the instance's current launch. A refusal is a `checkin:rejected` with its reason; the
 * supervisor decides how often to log it (a misconfigured server pings for ever). A server the previous daemon
 * left may check in while its instance is still being started (503): not a fault, so not reported.
 */
export function checkinSecret(deps: Pick<HttpDeps, 'registry' | 'bus'>): MiddlewareHandler<InstanceEnv> {
  return instanceAuth(deps, 'checkinSecret', (c, key, r) => {
    if (r.status === 503) return;
    deps.bus.emit('checkin:rejected', {
      key: shownKey(key),
      reason: r.reason,
      remote: remoteAddress(c),
      at: Date.now(),
    });
  });
}
