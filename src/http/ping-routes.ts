import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import type { HttpDeps } from './deps.ts';
import { checkinSecret, type InstanceEnv } from './instance-auth.ts';
import { methodNotAllowed } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

/**
 * This route for the OpenAPI document (route-doc.ts). Described only.
 */
export const pingRouteDocs: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/server_api/{key}/ping',
    tag: 'check-in',
    access: 'launch',
    summary: "the game server's check-in",
    responses: { 200: 'checked in (empty body)', ...errors(400, 401, 403, 404, 405, 503) },
  },
];

/**
 * `POST /:key/ping`, Basic `<key>:<secret of the current launch>`; mounted at `/server_api`. A refused check-in is
 * emitted as `checkin:rejected` with its reason (instance-auth.ts). The connection of an accepted one is trusted
 * (`deps.trustCheckin`), so the connection guard never evicts it.
 */
export function pingRoutes(deps: HttpDeps): Hono<InstanceEnv> {
  const app = new Hono<InstanceEnv>();
  app.post('/:key/ping', checkinSecret(deps), (c) => {
    c.var.instance.checkin();
    // No socket under app.request() (route tests).
    const socket = (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket;
    if (socket) deps.trustCheckin?.(socket);
    return c.body('', 200);
  });
  app.all('/:key/ping', methodNotAllowed('POST'));
  return app;
}
