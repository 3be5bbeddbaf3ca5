import { dirname } from 'node:path';
import { Hono, type MiddlewareHandler } from 'hono';
import { EMPTY_USERS, hasAccounts } from '../auth/users-file.ts';
import type { InstanceControl } from '../supervisor/contract.ts';
import { type AdminEnv, adminAccess } from './admin-auth.ts';
import { auditControl, CONTROL_VERBS, carryOut, controlRequestOf } from './control.ts';
import { controlQueryDocs } from './control-routes.ts';
import type { HttpDeps } from './deps.ts';
import { remoteAddress, shownKey } from './request-info.ts';
import { meOf, needs, refuseAdmin, visibleStatuses } from './rights.ts';
import { errors, type RouteDoc } from './route-doc.ts';
import type { InstanceRoute } from './route-permissions.ts';
import type { DashboardControl } from './schemas.ts';

/** The routes behind `adminAccess` and `dashboardInstance`: the admin user and the instance the path names. */
export type DashboardEnv = { Variables: AdminEnv['Variables'] & { instance: InstanceControl } };

/**
 * Sent by the dashboard with every control request: a page on another site cannot add a custom header to a
 * cross-origin POST without a CORS preflight, which this daemon never answers (cross-site request forgery).
 */
export const DASHBOARD_HEADER = 'x-watchdog-dashboard';

export const apiRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /api/instances',
    tag: 'dashboard',
    access: 'admin',
    summary: "every instance's status",
    responses: {
      200: { description: 'the status JSON of each instance', json: 'InstanceStatus', list: true },
      ...errors(400, 401, 403, 405),
      503: 'the daemon is still registering its instances (with Retry-After: 1)',
    },
  },
  {
    route: 'get /api/me',
    tag: 'dashboard',
    access: 'admin',
    summary: 'who the client is, and its permissions on each instance it may see (the page shows only those)',
    responses: {
      200: { description: 'the client and its rights', json: 'DashboardMe' },
      ...errors(400, 401, 403, 405),
    },
  },
  ...CONTROL_VERBS.map(
    (action): RouteDoc => ({
      route: `post /api/instances/{key}/${action}`,
      tag: 'dashboard',
      access: 'admin',
      header: DASHBOARD_HEADER,
      summary: `the dashboard's ${action}: answered as POST /instances/{key}/${action}, audited with the Admin user`,
      ...controlQueryDocs(action),
      responses: {
        200: { description: 'taken', json: 'DashboardControl' },
        ...errors(400, 401),
        403: `the dashboard rule refuses, the ${DASHBOARD_HEADER} header is missing, or the instance has no ApiToken`,
        ...errors(404, 405, 409),
      },
    }),
  ),
];

/** The instance folder `instances/<key>`: the parent of its `binaries/`. */
export const instanceDir = (instance: InstanceControl): string => dirname(instance.binariesDir());

/**
 * For the dashboard's control requests, after `adminAccess`: the dashboard's header, then `c.var.instance`. Without
 * accounts an instance without an ApiToken refuses control here too, audited like a refused control request.
 */
export function dashboardInstance(deps: HttpDeps): MiddlewareHandler<DashboardEnv> {
  const { registry, bus, log } = deps;
  return async (c, next) => {
    const key = c.req.param('key') ?? '';
    const user = c.var.adminUser;
    const verb = c.req.path.slice(c.req.path.lastIndexOf('/') + 1);
    const reject = (status: 403 | 404, error: string) =>
      refuseAdmin(c, bus, error, { status, key, action: `dashboard ${verb}` });
    if (c.req.header(DASHBOARD_HEADER) === undefined)
      return reject(403, `control requests need the ${DASHBOARD_HEADER} header (sent by the dashboard)`);
    const instance = registry.get(key);
    if (!instance) return reject(404, `no instance ${shownKey(key)}`);
    if (instance.apiToken() === undefined && !hasAccounts(deps.users?.() ?? EMPTY_USERS)) {
      const error = `instance ${shownKey(key)} has no ApiToken, so control is disabled for it`;
      const remote = remoteAddress(c);
      auditControl(bus, key, verb, { user, remote }, { status: 403, error });
      log.warn(`control ${verb} refused: ${error}`, { key, via: 'dashboard', remote: remote ?? '' });
      return c.json({ error }, 403);
    }
    c.set('instance', instance);
    await next();
  };
}

/** `GET /api/instances`, `GET /api/me` and `POST /api/instances/:key/<verb>`, audited with the admin user's name. */
export function apiRoutes(deps: HttpDeps): Hono<DashboardEnv> {
  const app = new Hono<DashboardEnv>();
  const access = adminAccess(deps);

  // Not an empty list while the daemon starts: a client would take it for instances gone.
  app.get('/api/instances', access, (c) => {
    if (deps.registry.startingUp?.() === true) {
      c.header('Retry-After', '1');
      return c.json({ error: 'the daemon is still registering its instances; retry in a moment' }, 503);
    }
    return c.json(visibleStatuses(c, deps));
  });

  app.get('/api/me', access, (c) => c.json(meOf(c, deps)));

  const instance = dashboardInstance(deps);
  for (const verb of CONTROL_VERBS) {
    const row = `POST /instances/:key/${verb}` satisfies InstanceRoute;
    app.post(`/api/instances/:key/${verb}`, access, needs(deps, row), instance, async (c) => {
      const user = c.var.adminUser;
      const req = controlRequestOf(c, c.var.instance.key, user, {
        // The Hold button sends no reason; the status then says where the hold came from.
        holdReason: `held from the dashboard${user ? ` by ${user}` : ''}`,
        via: 'dashboard',
      });
      const answer = await carryOut(deps, c.var.instance, verb, req);
      if ('error' in answer) return c.json({ error: answer.error }, answer.status);
      const body: DashboardControl = { key: c.var.instance.key, action: verb, accepted: true };
      return c.json(body);
    });
  }
  return app;
}
