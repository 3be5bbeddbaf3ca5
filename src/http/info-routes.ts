import { Hono } from 'hono';
import { ALL_INSTANCES } from '../auth/permissions.ts';
import { createMetricsCollector } from '../metrics/collector.ts';
import { adminAccess } from './admin-auth.ts';
import type { HttpDeps } from './deps.ts';
import { allowed, refuseRight } from './rights.ts';
import { errors, type RouteDoc } from './route-doc.ts';
import type { Health } from './schemas.ts';

/** The real watchdog's padlock, byte for byte (its `WatchdogController.cs`). */
export const PADLOCK = ' --\n|  |\n####\n####\n';

export const infoRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /watchdog/padlock',
    tag: 'info',
    access: 'none',
    summary: "the real watchdog's padlock text",
    responses: { 200: { description: 'the padlock', media: 'text/plain' }, ...errors(405) },
  },
  {
    route: 'get /health',
    tag: 'info',
    access: 'none',
    summary: "the daemon's version, pid, uptime and each instance's state",
    responses: { 200: { description: 'alive', json: 'Health' }, ...errors(405) },
  },
  {
    route: 'get /metrics',
    tag: 'info',
    access: 'admin',
    summary: 'Prometheus metrics',
    responses: {
      200: { description: 'Prometheus text exposition', media: 'text/plain' },
      ...errors(400, 401, 403, 405),
    },
  },
];

/** `GET /watchdog/padlock`, `GET /health` and `GET /metrics`; mounted at `/`. */
export function infoRoutes(deps: HttpDeps): Hono {
  const { registry, version, disk = () => [] } = deps;
  const app = new Hono();
  const collector = deps.metrics ?? createMetricsCollector({ bus: deps.bus, registry: deps.registry, version });

  app.get('/watchdog/padlock', (c) => c.body(PADLOCK, 200, { 'Content-Type': 'text/plain; charset=utf-8' }));

  // Its pid lets base-url-check.ts see that BaseUrl reaches this process. A low disk makes it `degraded` but still
  // 200: a container healthcheck must not restart the daemon over what a restart cannot cure.
  app.get('/health', (c) => {
    const filesystems = disk();
    const problems = filesystems.filter((d) => d.low).map((d) => `disk space low: ${d.message}`);
    return c.json({
      status: problems.length > 0 ? 'degraded' : 'ok',
      ...(problems.length > 0 ? { problems } : {}),
      ...(filesystems.length > 0 ? { disk: filesystems } : {}),
      version,
      pid: process.pid,
      uptimeSeconds: Math.floor(process.uptime()),
      ...(registry.startingUp?.() === true ? { starting: true as const } : {}),
      instances: Object.fromEntries(registry.list().map((i) => [i.key, i.currentState()])),
    } satisfies Health);
  });

  // Every instance's figures: for whoever may read the status of all of them (a grant without @<instance>).
  app.get('/metrics', adminAccess(deps), async (c) => {
    if (!allowed(c, deps, 'status.read', ALL_INSTANCES)) return refuseRight(c, deps, 'status.read', ALL_INSTANCES);
    return c.body(await collector.metrics(), 200, {
      'Content-Type': collector.contentType,
      'Cache-Control': 'no-store',
    });
  });

  return app;
}
