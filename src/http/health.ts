import type { DiskReading } from '../bus.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { Health } from './schemas.ts';

/**
 * The body of `GET /health`. pid lets the daemon check at start that BaseUrl reaches this very process
 * (src/daemon/base-url-check.ts); the uptime is the process's. A disk low on space makes it `degraded`, with the
 * figures in `problems`, but the answer stays 200: a container healthcheck must not restart the daemon over a full
 * disk, which a restart does not cure and which the daemon still supervises through.
 */
export function healthBody(registry: InstanceRegistry, version: string, disk: () => DiskReading[] = () => []): Health {
  const instances: Record<string, string> = {};
  for (const inst of registry.list()) instances[inst.key] = inst.status().state;
  const filesystems = disk();
  const problems = filesystems.filter((d) => d.low).map((d) => `disk space low: ${d.message}`);
  return {
    status: problems.length > 0 ? 'degraded' : 'ok',
    ...(problems.length > 0 ? { problems } : {}),
    ...(filesystems.length > 0 ? { disk: filesystems } : {}),
    version,
    pid: process.pid,
    uptimeSeconds: Math.floor(process.uptime()),
    instances,
  };
}
