import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { createLoginLimits, DEFAULT_LOGIN_LIMITS } from '../auth/login-limits.ts';
import { createSessionStore, DEFAULT_SESSIONS } from '../auth/sessions.ts';
import { describeError } from '../errors.ts';
import { apiRoutes } from './api-routes.ts';
import { backupRoutes } from './backup-routes.ts';
import { binariesRoutes } from './binaries-routes.ts';
import { consoleRoutes } from './console-routes.ts';
import { controlRoutes, pingRoutes } from './control-routes.ts';
import { crossSiteGuard } from './cross-site.ts';
import { eventRoutes } from './dashboard/events.ts';
import { recordRecentEvents } from './dashboard/recent-events.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import type { HttpDeps } from './deps.ts';
import { fileRoutes } from './file-routes.ts';
import { infoRoutes } from './info-routes.ts';
import { logRoutes } from './log-routes.ts';
import { loginRoutes } from './login-routes.ts';
import { oidcRoutes } from './oidc-routes.ts';
import { openapiRoutes, ROUTE_DOCS } from './openapi-routes.ts';
import { clientAddresses } from './request-info.ts';
import { methodPath } from './route-doc.ts';
import { userRoutes } from './user-routes.ts';

/**
 * The watchdog's HTTP API. Each sub-app puts its authentication in front of each handler, never under a path prefix:
 * the sub-apps share prefixes (`/instances` also serves the open binaries), and a route registered before a prefix
 * guard would be unguarded.
 */
export function createApp(given: HttpDeps): Hono {
  const app = new Hono();
  // One of each, shared by the login routes, every adminAccess, the page and `/events`.
  const deps = {
    ...given,
    sessions: given.sessions ?? createSessionStore(() => DEFAULT_SESSIONS),
    loginLimits: given.loginLimits ?? createLoginLimits(() => DEFAULT_LOGIN_LIMITS),
    recent: given.recent ?? recordRecentEvents(given.bus),
  };

  // Before every route: who the client is (TrustedProxies), and no state-changing request a browser sent on behalf
  // of another site.
  app.use(
    '*',
    clientAddresses(() => deps.trustedProxies?.() ?? []),
  );
  app.use('*', crossSiteGuard(deps));
  app.route('/instances', controlRoutes(deps));
  app.route('/instances', binariesRoutes(deps));
  app.route('/server_api', pingRoutes(deps));
  const atRoot = [logRoutes, backupRoutes, consoleRoutes, fileRoutes, infoRoutes, openapiRoutes, dashboardRoutes];
  for (const routes of [...atRoot, loginRoutes, oidcRoutes, eventRoutes]) app.route('/', routes(deps));
  app.route('/', apiRoutes(deps));
  app.route('/', userRoutes(deps));

  // Another method on a known path: 405 with `Allow`, as ASP.NET answers; last, so it never shadows a handler.
  const allowed = new Map<string, string[]>();
  for (const doc of ROUTE_DOCS) {
    const { method, path } = methodPath(doc);
    if (405 in doc.responses)
      allowed.set(path, [...(allowed.get(path) ?? []), method === 'get' ? 'GET, HEAD' : method.toUpperCase()]);
  }
  for (const [path, methods] of allowed)
    app.all(path.replace(/\{path\}$/, '*').replace(/\{(\w+)\}/g, ':$1'), (c) => {
      c.header('Allow', methods.join(', '));
      return c.json({ error: `method ${c.req.method} not allowed; use ${methods.join(', ')}` }, 405);
    });

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError((err, c) => {
    // An HTTPException may carry a full response (basicAuth's carries WWW-Authenticate): keep it intact.
    if (err instanceof HTTPException) return err.res ? err.getResponse() : c.json({ error: err.message }, err.status);
    // Path and method only: the Authorization header never reaches a log line.
    deps.log.error('request failed', { method: c.req.method, path: c.req.path, error: describeError(err) });
    return c.json({ error: 'internal error' }, 500);
  });
  return app;
}
