import { Hono } from 'hono';
import type { HttpDeps } from './deps.ts';
import { healthBody } from './health.ts';
import { methodNotAllowed } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

/** The real watchdog's padlock, byte for byte (its `WatchdogController.cs`). */
export const PADLOCK = ' --\n|  |\n####\n####\n';

/** These routes for the OpenAPI document (route-doc.ts). */
export const infoRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/watchdog/padlock',
    tag: 'info',
    access: 'none',
    summary: "the real watchdog's padlock text",
    responses: { 200: { description: 'the padlock', media: 'text/plain' }, ...errors(405) },
  },
  {
    method: 'get',
    path: '/health',
    tag: 'info',
    access: 'none',
    summary: "the daemon's version, pid, uptime and each instance's state",
    responses: { 200: { description: 'alive', json: 'Health' }, ...errors(405) },
  },
];

/** `GET /watchdog/padlock` and `GET /health`, no auth; mounted at `/`. */
export function infoRoutes({ registry, version, disk }: HttpDeps): Hono {
  const app = new Hono();

  app.get('/watchdog/padlock', (c) => c.body(PADLOCK, 200, { 'Content-Type': 'text/plain; charset=utf-8' }));
  app.all('/watchdog/padlock', methodNotAllowed('GET, HEAD'));

  app.get('/health', (c) => c.json(healthBody(registry, version, disk)));
  app.all('/health', methodNotAllowed('GET, HEAD'));

  return app;
}
