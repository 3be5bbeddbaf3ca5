import { Hono } from 'hono';
import type { MetricsCollector } from '../metrics/collector.ts';
import { adminAccess } from './admin-auth.ts';
import type { HttpDeps } from './deps.ts';
import { methodNotAllowed } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

/** This route for the OpenAPI document (route-doc.ts). */
export const metricsRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/metrics',
    tag: 'info',
    access: 'admin',
    summary: 'Prometheus metrics',
    responses: {
      200: { description: 'Prometheus text exposition', media: 'text/plain' },
      ...errors(400, 401, 403, 405),
    },
  },
];

/** `GET /metrics`: Prometheus text exposition, with the dashboard's access rule. */
export function metricsRoutes(deps: HttpDeps, collector: MetricsCollector): Hono {
  const app = new Hono();
  app.get('/metrics', adminAccess(deps), async (c) =>
    c.body(await collector.metrics(), 200, { 'Content-Type': collector.contentType, 'Cache-Control': 'no-store' }),
  );
  app.all('/metrics', methodNotAllowed('GET, HEAD'));
  return app;
}
