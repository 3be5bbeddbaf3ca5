import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describeError } from '../errors.ts';
import { binariesRoutes } from './binaries-routes.ts';
import { controlRoutes } from './control-routes.ts';
import type { HttpDeps } from './deps.ts';
import { infoRoutes } from './info-routes.ts';
import { pingRoutes } from './ping-routes.ts';

export type { HttpDeps } from './deps.ts';

/**
 * The watchdog's HTTP API (DESIGN.md §5). Only builds the app; `startHttpServer` listens. Authentication is done
 * inside each route (the key in the path selects the secret), so there is no prefix middleware whose
 * registration order could leave a route open (STYLE.md §3).
 */
export function createApp(deps: HttpDeps): Hono {
  const app = new Hono();
  const log = deps.log;

  app.route('/instances', controlRoutes(deps));
  app.route('/instances', binariesRoutes(deps));
  app.route('/server_api', pingRoutes(deps));
  app.route('/', infoRoutes(deps));

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((err, c) => {
    // An HTTPException may carry a full response (basicAuth's carries WWW-Authenticate): keep it intact.
    if (err instanceof HTTPException) return err.res ? err.getResponse() : c.json({ error: err.message }, err.status);
    // Path and method only: the Authorization header never reaches a log line.
    log.error('request failed', { method: c.req.method, path: c.req.path, error: describeError(err) });
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
