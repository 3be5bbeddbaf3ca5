import type { Context, MiddlewareHandler } from 'hono';
import { can } from '../auth/can.ts';
import { PERMISSIONS, type Permission } from '../auth/permissions.ts';
import { EMPTY_USERS } from '../auth/users-file.ts';
import type { Bus } from '../bus.ts';
import type { AdminEnv } from './admin-auth.ts';
import type { HttpDeps } from './deps.ts';
import { reportRefused } from './refused.ts';
import { shownKey } from './request-info.ts';
import { type InstanceRoute, permissionsOf } from './route-permissions.ts';
import type { DashboardMe } from './schemas.ts';

type Deps = Pick<HttpDeps, 'users' | 'bus'>;
/** What `adminAccess` set: any route's context behind it has it. */
type Admitted = Pick<Context<AdminEnv>, 'var'>;

/** Whether the client `adminAccess` let in may use `permission` on `instance` (`*`: all); all, without accounts. */
export function allowed(c: Admitted, deps: Pick<HttpDeps, 'users'>, permission: Permission, instance: string): boolean {
  const p = c.var.principal;
  return p === undefined || can(p, permission, instance, deps.users?.() ?? EMPTY_USERS);
}

/** Answers `error` (403 unless told), naming the permission lacking if one is; reported as the admin routes' refusal. */
export function refuseAdmin<E extends AdminEnv>(
  c: Context<E>,
  bus: Bus,
  error: string,
  more: { status?: 403 | 404; key?: string; permission?: Permission; action?: string } = {},
): Response {
  const status = more.status ?? 403;
  reportRefused(bus, c, { ...more, route: 'admin', user: c.var.adminUser, status, reason: error });
  return c.json({ error, permission: more.permission }, status);
}

/** 403 naming the right the client lacks on `key`. */
export const refuseRight = <E extends AdminEnv>(c: Context<E>, deps: Deps, permission: Permission, key: string) =>
  refuseAdmin(c, deps.bus, `${c.var.adminUser ?? 'this client'} may not ${permission} on ${shownKey(key)}`, {
    key,
    permission,
  });

/** The status of each instance the client may see (status.read): the list, the page and `/events` agree. */
export const visibleStatuses = (c: Admitted, deps: Pick<HttpDeps, 'registry' | 'users'>) =>
  deps.registry
    .list()
    .filter((i) => allowed(c, deps, 'status.read', i.key))
    .map((i) => i.status());

/**
 * After `adminAccess` on a `/api/instances/:key/…` route: the permission of the instance route it mirrors, asked
 * before the instance is looked up, so a key without rights learns nothing of which instances exist.
 */
export function needs<E extends AdminEnv>(deps: Deps, row: InstanceRoute): MiddlewareHandler<E> {
  return async (c, next) => {
    const key = c.req.param('key') ?? '';
    const lacking = permissionsOf(row, (name) => c.req.query(name)).find((p) => !allowed(c, deps, p, key));
    if (lacking !== undefined) return refuseRight(c, deps, lacking, key);
    await next();
  };
}

/**
 * `GET /api/me` and the page's inlined copy: who the client is, and what it holds on each instance it may see. The
 * page shows a card's buttons and panels by it; the daemon still asks can() at every request.
 */
export function meOf(c: Admitted, deps: Pick<HttpDeps, 'registry' | 'users' | 'bus'>): DashboardMe {
  const permissions: Record<string, string[]> = {};
  for (const i of deps.registry.list()) {
    const held = PERMISSIONS.filter((p) => allowed(c, deps, p, i.key));
    if (held.includes('status.read')) permissions[i.key] = held;
  }
  const p = c.var.principal;
  return {
    user: c.var.adminUser ?? null,
    kind: p === undefined ? null : p.kind,
    accounts: p !== undefined,
    session: c.var.session !== undefined,
    permissions,
  };
}
