import { fileURLToPath } from 'node:url';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type MiddlewareHandler } from 'hono';
import { CHART_VIEWS, isChartView, OPERATOR_STATES } from '../../chart/operator.ts';
import { cachedChartSvg } from '../../chart/render.ts';
import { describeError } from '../../errors.ts';
import { adminAccess } from '../admin-auth.ts';
import type { HttpDeps } from '../deps.ts';
import { allowed, meOf, visibleStatuses } from '../rights.ts';
import { errors, type RouteDoc } from '../route-doc.ts';
import { type ChartSource, dashboardPage } from './page.ts';

/** The dashboard's files, anchored to this module so the daemon's working directory does not matter. */
export const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

/**
 * Everything from this origin, nothing inline, no framing: the page shows server log lines and instance names,
 * so a line that looks like markup must never run (app.js also only ever sets textContent).
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const dashboardRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /',
    tag: 'dashboard',
    access: 'admin',
    summary: "the dashboard page, rendered with every instance's card",
    responses: { 200: { description: 'the page', media: 'text/html' }, ...errors(400, 401, 403, 405) },
  },
  {
    route: 'get /statechart.svg',
    tag: 'dashboard',
    access: 'admin',
    summary: 'the instance statechart',
    query: [
      {
        name: 'view',
        type: 'string',
        description: `${CHART_VIEWS.join(' or ')}: the server's life in plain words (the dashboard's first view), or every region and transition as the machine names them (default)`,
      },
    ],
    responses: { 200: { description: 'the statechart', media: 'image/svg+xml' }, ...errors(400, 401, 403) },
  },
  {
    route: 'get /dashboard/{file}',
    tag: 'dashboard',
    access: 'admin',
    summary: "the page's scripts and stylesheet",
    responses: { 200: { description: 'the file (.js, .css, .html or .svg)' }, ...errors(400, 401, 403, 404) },
  },
];

const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Content-Security-Policy', CSP);
  c.res.headers.set('X-Content-Type-Options', 'nosniff');
  c.res.headers.set('Referrer-Policy', 'no-referrer');
  c.res.headers.set('Cache-Control', 'no-cache');
};

/** `GET /`, `GET /statechart.svg` and `GET /dashboard/<asset>`, behind `adminAccess`. */
export function dashboardRoutes(deps: HttpDeps & Required<Pick<HttpDeps, 'recent'>>): Hono {
  const app = new Hono();
  const access = adminAccess(deps);
  const chart = cachedChartSvg(deps.log.child('chart'));

  const page = dashboardPage(ASSETS_DIR);
  // A chart that cannot be drawn is logged and said in its box; the page still comes.
  const chartSource = (): Promise<ChartSource> =>
    chart('operator').then(
      (svg) => ({ svg }),
      (err: unknown) => {
        deps.log.warn('cannot draw the statechart for the dashboard', { error: describeError(err) });
        return { error: err instanceof Error ? err.message : String(err) };
      },
    );

  // Rendered with the instances, the recent events and the operator's chart, so they show before any script runs.
  app.get('/', access, securityHeaders, async (c) => {
    const state = {
      version: deps.version,
      now: Date.now(),
      instances: visibleStatuses(c, deps),
      recent: deps.recent.list().filter((r) => allowed(c, deps, 'status.read', r.event.key)),
      stateNames: OPERATOR_STATES,
      me: c.var.principal === undefined ? undefined : meOf(c, deps),
    };
    return c.html(await page(state, await chartSource()));
  });
  app.get('/statechart.svg', access, securityHeaders, async (c) => {
    const view = c.req.query('view') ?? 'developer';
    if (!isChartView(view))
      return c.json({ error: `view must be one of ${CHART_VIEWS.join(', ')}, not "${view}"` }, 400);
    return c.body(await chart(view), 200, { 'Content-Type': 'image/svg+xml; charset=utf-8' });
  });
  app.get(
    '/dashboard/:file{[a-z-]+\\.(?:js|css|html|svg)}',
    access,
    securityHeaders,
    serveStatic({
      root: ASSETS_DIR,
      rewriteRequestPath: (p) => p.replace(/^\/dashboard/, ''),
    }),
  );
  return app;
}
