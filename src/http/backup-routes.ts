import { Hono } from 'hono';
import { requester } from '../notify/messages.ts';
import type { InstanceControl } from '../supervisor/contract.ts';
import type { BackupListing } from '../supervisor/status.ts';
import { adminAccess } from './admin-auth.ts';
import { DASHBOARD_HEADER, type DashboardEnv, dashboardInstance } from './api-routes.ts';
import { type Answer, auditControl, type Caller, NO_BACKUPS, reply } from './control.ts';
import type { HttpDeps } from './deps.ts';
import { apiToken, type InstanceEnv } from './instance-auth.ts';
import { remoteAddress } from './request-info.ts';
import { needs } from './rights.ts';
import { errors, type RouteDoc } from './route-doc.ts';

export const backupRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /instances/{key}/backups',
    tag: 'backups',
    access: 'instance',
    summary: "the snapshots of the instance's data, newest first",
    responses: {
      200: { description: 'the snapshots', json: 'Backup', list: true },
      ...errors(400, 401, 403, 404, 405, 503),
    },
  },
  {
    route: 'post /instances/{key}/backups',
    tag: 'backups',
    access: 'instance',
    summary:
      "take a snapshot of the instance's data and config.toml now (SQLite databases with the online backup, so a running server is fine); answers when it is taken",
    responses: {
      200: { description: 'the snapshot taken', json: 'Backup' },
      ...errors(400, 401, 403, 404, 405, 500, 503, 507),
    },
  },
  ...(['get', 'post'] as const).map(
    (method): RouteDoc => ({
      route: `${method} /api/instances/{key}/backups`,
      tag: 'dashboard',
      access: 'admin',
      header: DASHBOARD_HEADER,
      summary: `the dashboard's backups: answered as ${method.toUpperCase()} /instances/{key}/backups${method === 'post' ? ', audited with the Admin user' : ''}`,
      responses: {
        200:
          method === 'get'
            ? { description: 'the snapshots', json: 'Backup', list: true }
            : { description: 'the snapshot taken', json: 'Backup' },
        ...errors(401, 403, 404, 405, ...(method === 'post' ? ([500, 507] as const) : [])),
      },
    }),
  ),
];

async function list(instance: InstanceControl): Promise<Answer<BackupListing[]>> {
  if (!instance.backups) return { status: 404, error: NO_BACKUPS };
  return { status: 200, body: await instance.backups.list() };
}

/** A control request: audited, as action `backup`, whether it worked or not. */
async function take(deps: HttpDeps, instance: InstanceControl, caller: Caller): Promise<Answer<BackupListing>> {
  const audit = (status: number, error?: string) =>
    auditControl(deps.bus, instance.key, 'backup', caller, { status, ...(error ? { error } : {}) });
  if (!instance.backups) {
    audit(404, 'no backups');
    return { status: 404, error: NO_BACKUPS };
  }
  try {
    const taken = await instance.backups.take(requester(instance.key, caller.user, caller.remote));
    audit(200);
    return { status: 200, body: taken };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const status = (err as { reason?: string }).reason === 'space' ? 507 : 500;
    audit(status, message);
    return { status, error: message };
  }
}

/** `GET|POST /instances/:key/backups` and the dashboard's `/api/instances/:key/backups`; mounted at `/`. */
export function backupRoutes(deps: HttpDeps): Hono {
  const api = new Hono<InstanceEnv>();
  api.get('/instances/:key/backups', apiToken(deps, 'status', 'GET /instances/:key/backups'), async (c) =>
    reply(c, await list(c.var.instance)),
  );
  api.post('/instances/:key/backups', apiToken(deps, 'control', 'POST /instances/:key/backups'), async (c) =>
    reply(c, await take(deps, c.var.instance, { user: c.var.user, remote: remoteAddress(c) })),
  );

  const dashboard = new Hono<DashboardEnv>();
  const [access, instance] = [adminAccess(deps), dashboardInstance(deps)];
  const mayList = needs<DashboardEnv>(deps, 'GET /instances/:key/backups');
  const mayTake = needs<DashboardEnv>(deps, 'POST /instances/:key/backups');
  dashboard.get('/api/instances/:key/backups', access, mayList, instance, async (c) =>
    reply(c, await list(c.var.instance)),
  );
  dashboard.post('/api/instances/:key/backups', access, mayTake, instance, async (c) =>
    reply(c, await take(deps, c.var.instance, { user: c.var.adminUser, remote: remoteAddress(c) })),
  );

  return new Hono().route('/', api).route('/', dashboard);
}
