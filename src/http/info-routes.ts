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

/**
 * The body of `GET /health`. pid lets the daemon check at start that BaseUrl reaches this very process
 * (src/daemon/base-url-check.ts); the uptime is the process's.
 */
export function healthBody(registry: HttpDeps['registry'], version: string): Health {
  const instances: Record<string, string> = {};
  for (const inst of registry.list()) instances[inst.key] = inst.status().state;
  return { status: 'ok', version, pid: process.pid, uptimeSeconds: Math.floor(process.uptime()), instances };
}

/** `GET /watchdog/padlock` and `GET /health`, no auth; mounted at `/`. */
export function infoRoutes({ registry, version }: HttpDeps): Hono {
  const app = new Hono();

  app.get('/watchdog/padlock', (c) => c.body(PADLOCK, 200, { 'Content-Type': 'text/plain; charset=utf-8' }));
  app.all('/watchdog/padlock', methodNotAllowed('GET, HEAD'));

  app.get('/health', (c) => c.json(healthBody(registry, version)));
  app.all('/health', methodNotAllowed('GET, HEAD'));

  return app;
}
