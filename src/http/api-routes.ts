import { dirname, join } from 'node:path';
import { type Context, Hono } from 'hono';
import { describeError } from '../errors.ts';
import { requester } from '../notify/messages.ts';
import { tailLog } from '../process/log-tail.ts';
import { adminAccess, type AdminEnv } from './admin-auth.ts';
import { reportRefused } from './refused.ts';
import type { HttpDeps } from './deps.ts';
import type { ControlAction, InstanceControl } from '../supervisor/contract.ts';
import { methodNotAllowed, remoteAddress, shownKey } from './request-info.ts';
import { type DashboardControl, type DashboardLog, errors, type RouteDoc } from './route-doc.ts';

const ACTIONS: readonly DashboardAction[] = ['restart', 'update', 'stop', 'rollback', 'hold', 'release'];
type DashboardAction = ControlAction | 'hold' | 'release';
/** The dashboard's Hold button holds for an hour (`watchdog hold --for` sets any length). */
const DASHBOARD_HOLD_MINUTES = 60;
const MAX_LOG_LINES = 1000;

/**
 * The header the dashboard sends with every control request. A page on another site cannot add a custom header
 * to a cross-origin POST without a CORS preflight, which this daemon never answers, so a browser that holds the
 * admin credentials (or sits on the loopback) cannot be made to press the buttons (cross-site request forgery).
 */
export const DASHBOARD_HEADER = 'x-watchdog-dashboard';

/** These routes for the OpenAPI document (route-doc.ts). */
export const apiRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/api/instances',
    tag: 'dashboard',
    access: 'admin',
    summary: "every instance's status",
    responses: {
      200: { description: 'the status JSON of each instance', json: 'InstanceStatus', list: true },
      ...errors(400, 401, 403, 405),
    },
  },
  {
    method: 'get',
    path: '/api/instances/{key}/log',
    tag: 'dashboard',
    access: 'admin',
    summary: 'the last lines of the server log',
    query: [{ name: 'n', type: 'integer', description: `how many lines (default 100, at most ${MAX_LOG_LINES})` }],
    responses: { 200: { description: 'the lines', json: 'DashboardLog' }, ...errors(400, 401, 403, 404, 405) },
  },
  ...ACTIONS.map(
    (action): RouteDoc => ({
      method: 'post',
      path: `/api/instances/{key}/${action}`,
      tag: 'dashboard',
      access: 'admin',
      header: DASHBOARD_HEADER,
      summary: `the dashboard's ${action}, audited with the Admin user`,
      responses: {
        200: { description: 'taken', json: 'DashboardControl' },
        ...errors(400, 401),
        403: {
          description: `the dashboard rule refuses, the ${DASHBOARD_HEADER} header is missing, or the instance has no ApiToken`,
          json: 'Error',
        },
        ...errors(404, 405, 409),
      },
    }),
  ),
];

/** The instance folder `instances/<key>`: the parent of its `binaries/`. */
export function instanceDir(instance: InstanceControl): string {
  return dirname(instance.binariesDir());
}

/**
 * Admin routes for the dashboard and scripts (same access rule as the dashboard):
 * `GET /api/instances` every instance's status; `GET /api/instances/:key/log?n=100` the tail of its server log;
 * `POST /api/instances/:key/{restart,update,stop,rollback}` control through the same `control()` as
 * `POST /instances/:key/<action>`, audited on the bus as `control` with the admin user name.
 */
export function apiRoutes(deps: HttpDeps): Hono<AdminEnv> {
  const { registry, bus, log } = deps;
  const app = new Hono<AdminEnv>();
  const access = adminAccess(deps);

  app.get('/api/instances', access, (c) => c.json(registry.list().map((i) => i.status())));
  app.all('/api/instances', methodNotAllowed('GET, HEAD'));

  app.get('/api/instances/:key/log', access, async (c) => {
    const key = c.req.param('key');
    const instance = registry.get(key);
    if (!instance) return c.json({ error: `no instance ${shownKey(key)}` }, 404);
    const raw = c.req.query('n') ?? '100';
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 1 || n > MAX_LOG_LINES)
      return c.json({ error: `n must be a whole number from 1 to ${MAX_LOG_LINES}` }, 400);
    const lines = await tailLog(join(instanceDir(instance), 'logs'), n);
    const body: DashboardLog = { key, lines };
    return c.json(body);
  });
  app.all('/api/instances/:key/log', methodNotAllowed('GET, HEAD'));

  const control = (action: DashboardAction) => (c: Context<AdminEnv>) => {
    const key = c.req.param('key') ?? '';
    const user = c.get('adminUser');
    const remote = remoteAddress(c);
    const shown = shownKey(key);
    const audit = (status: number) =>
      bus.emit('control', {
        key: shown,
        action,
        user,
        remote,
        status,
        result: status === 200 ? 'accepted' : 'refused',
        at: Date.now(),
      });
    const refuse = (status: 403 | 404 | 409, error: string) => {
      audit(status);
      log.warn(`dashboard control ${action} refused: ${error}`, { key: shown, remote: remote ?? '' });
      return c.json({ error }, status);
    };
    // Refusals a client can repeat at will (no header, a made-up key) are rate-limited by source where written.
    const reject = (status: 403 | 404, error: string) => {
      reportRefused(bus, c, { route: 'admin', action: `dashboard ${action}`, key, user, status, reason: error });
      return c.json({ error }, status);
    };

    if (c.req.header(DASHBOARD_HEADER) === undefined)
      return reject(403, `control requests need the ${DASHBOARD_HEADER} header (sent by the dashboard)`);
    const instance = registry.get(key);
    if (!instance) return reject(404, `no instance ${shown}`);
    // An instance without an ApiToken refuses control, through the dashboard too.
    if (instance.apiToken() === undefined)
      return refuse(403, `instance ${shown} has no ApiToken, so control is disabled for it`);
    let refused: string | null = null;
    try {
      if (action === 'hold')
        instance.hold?.(DASHBOARD_HOLD_MINUTES, `held from the dashboard${user ? ` by ${user}` : ''}`);
      else if (action === 'release') refused = instance.release?.() ? null : 'nothing is held for this instance';
      else instance.control(action, { by: requester(key, user, remote) });
    } catch (err) {
      audit(500);
      throw new Error(`control ${action} of instance ${key} failed: ${describeError(err)}`, { cause: err });
    }
    if (refused !== null) return refuse(409, refused);
    audit(200);
    log.info(`dashboard control ${action} accepted`, { key, user: user ?? '(loopback)', remote: remote ?? '' });
    const body: DashboardControl = { key, action, accepted: true };
    return c.json(body);
  };
  for (const action of ACTIONS) {
    app.post(`/api/instances/:key/${action}`, access, control(action));
    app.all(`/api/instances/:key/${action}`, methodNotAllowed('POST'));
  }
  return app;
}
