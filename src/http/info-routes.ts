import { Hono } from 'hono';
import type { HttpDeps } from './deps.ts';
import { methodNotAllowed } from './request-info.ts';
import { errors, type Health, type RouteDoc } from './route-doc.ts';

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
export function infoRoutes({ registry, version }: HttpDeps): Hono {
  const app = new Hono();
  const startedAt = Date.now();

  app.get('/watchdog/padlock', (c) => c.body(PADLOCK, 200, { 'Content-Type': 'text/plain; charset=utf-8' }));
  app.all('/watchdog/padlock', methodNotAllowed('GET, HEAD'));

  app.get('/health', (c) => {
    const instances: Record<string, string> = {};
    for (const inst of registry.list()) instances[inst.key] = inst.status().state;
    const uptimeSeconds = Math.floor((Date.now() - startedAt) / 1000);
    // pid lets the daemon check at start that BaseUrl reaches this very process (src/daemon/base-url-check.ts).
    const body: Health = { status: 'ok', version, pid: process.pid, uptimeSeconds, instances };
    return c.json(body);
  });
  app.all('/health', methodNotAllowed('GET, HEAD'));

  return app;
}
