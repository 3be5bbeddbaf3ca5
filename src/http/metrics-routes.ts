import { Hono } from 'hono';
import type { MetricsCollector } from '../metrics/collector.ts';
import { adminAccess } from './admin-auth.ts';
import type { HttpDeps } from './deps.ts';
import { methodNotAllowed } from './request-info.ts';

/** `GET /metrics`: Prometheus text exposition, with the dashboard's access rule. */
export function metricsRoutes(deps: HttpDeps, collector: MetricsCollector): Hono {
  const app = new Hono();
  app.get('/metrics', adminAccess(deps), async (c) =>
    c.body(await collector.metrics(), 200, { 'Content-Type': collector.contentType, 'Cache-Control': 'no-store' }));
  app.all('/metrics', methodNotAllowed('GET, HEAD'));
  return app;
}
