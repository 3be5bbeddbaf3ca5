import { Hono } from 'hono';
import { authorize, refusal } from './authorize.ts';
import type { HttpDeps } from './deps.ts';
import { methodNotAllowed, remoteAddress, shownKey } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

/**
 * This route for the OpenAPI document (route-doc.ts); checkin-fast-path.ts answers the same. Described only: the
 * hottest route gets no validation or other middleware.
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
 * `POST /:key/ping`, Basic `<key>:<secret of the current launch>`; mounted at `/server_api`. A refused check-in
 * is emitted as `checkin:rejected` with its reason; the supervisor decides how often to log it (a misconfigured
 * server pings forever).
 *
 * One handler for every method, not a POST route beside an `all` route for the 405: when two handlers match, Hono
 * composes them and answers through a promise, which cost the hottest route about a tenth of its throughput.
 */
export function pingRoutes({ registry, bus }: HttpDeps): Hono {
  const app = new Hono();
  const wrongMethod = methodNotAllowed('POST');
  app.all('/:key/ping', (c) => {
    if (c.req.method !== 'POST') return wrongMethod(c);
    const key = c.req.param('key');
    const auth = authorize(c.req.header('authorization'), key, registry, 'checkinSecret');
    if (!auth.ok) {
      // A server the previous daemon left may check in while we are still starting its instance: not a fault.
      if (auth.status === 503) return refusal(c, auth.status, auth.reason);
      bus.emit('checkin:rejected', {
        key: shownKey(key),
        reason: auth.reason,
        remote: remoteAddress(c),
        at: Date.now(),
      });
      return refusal(c, auth.status, auth.reason);
    }
    auth.instance.checkin();
    return c.body('', 200);
  });
  return app;
}
