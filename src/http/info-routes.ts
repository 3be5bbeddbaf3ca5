import { Hono } from 'hono';
import type { HttpDeps } from './deps.ts';
import { methodNotAllowed } from './request-info.ts';

/** The real watchdog's padlock, byte for byte (its `WatchdogController.cs`). */
export const PADLOCK = ' --\n|  |\n####\n####\n';

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
    return c.json({ status: 'ok', version, pid: process.pid, uptimeSeconds, instances });
  });
  app.all('/health', methodNotAllowed('GET, HEAD'));

  return app;
}
