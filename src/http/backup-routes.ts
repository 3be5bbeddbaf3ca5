import { Hono } from 'hono';
import { requester } from '../notify/messages.ts';
import { auditControl } from './control.ts';
import type { HttpDeps } from './deps.ts';
import { apiToken, type InstanceEnv } from './instance-auth.ts';
import { methodNotAllowed, remoteAddress } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

/** These routes for the OpenAPI document (route-doc.ts). */
export const backupRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/instances/{key}/backups',
    tag: 'backups',
    access: 'instance',
    summary: "the snapshots of the instance's data, newest first",
    responses: {
      200: { description: 'the snapshots', json: 'Backup', list: true },
      ...errors(400, 401, 403, 404, 405, 503),
    },
  },
  {
    method: 'post',
    path: '/instances/{key}/backups',
    tag: 'backups',
    access: 'instance',
    summary:
      "take a snapshot of the instance's data and config.toml now (SQLite databases with the online backup, so a running server is fine); answers when it is taken",
    responses: {
      200: { description: 'the snapshot taken', json: 'Backup' },
      ...errors(400, 401, 403, 404, 405, 500, 503, 507),
    },
  },
];

/**
 * `GET` and `POST /:key/backups`, Basic `<key>:<ApiToken>`; mounted at `/instances`. Taking a snapshot is a control
 * request: audited (`instance:control`, action `backup`) whether it worked or not.
 */
export function backupRoutes(deps: HttpDeps): Hono<InstanceEnv> {
  const app = new Hono<InstanceEnv>();
  app.get('/:key/backups', apiToken(deps, 'status'), async (c) => {
    const backups = c.var.instance.backups;
    if (!backups) return c.json({ error: 'this daemon keeps no backups for the instance' }, 404);
    return c.json(await backups.list());
  });
  app.post('/:key/backups', apiToken(deps, 'control'), async (c) => {
    const { instance, user } = c.var;
    const remote = remoteAddress(c);
    const audit = (status: number, error?: string) =>
      auditControl(deps.bus, instance.key, 'backup', { user, remote }, { status, ...(error ? { error } : {}) });
    if (!instance.backups) {
      audit(404, 'no backups');
      return c.json({ error: 'this daemon keeps no backups for the instance' }, 404);
    }
    try {
      const taken = await instance.backups.take(requester(instance.key, user, remote));
      audit(200);
      return c.json(taken);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const status = (err as { reason?: string }).reason === 'space' ? 507 : 500;
      audit(status, message);
      return c.json({ error: message }, status);
    }
  });
  app.all('/:key/backups', methodNotAllowed('GET, HEAD, POST'));
  return app;
}
