import type { DiskReading } from '../bus.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { FastPath } from './fast-path.ts';
import type { Health } from './route-doc.ts';

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

/**
 * `GET /health` (and HEAD) answered on node:http with the app's body: health probes poll it all day, and a daemon
 * whose only traffic is probes and check-ins then never builds a Fetch Request, which would load Node's undici
 * (several MB, and tens of ms at start: bench/footprint.ts). A query or another method goes on to the app.
 */
export function healthFastPath(registry: InstanceRegistry, version: string, disk?: () => DiskReading[]): FastPath {
  return (req, res) => {
    if (req.url !== '/health' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    // As the app answers a HEAD: the type, no length.
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end();
      return true;
    }
    const body = JSON.stringify(healthBody(registry, version, disk));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
    return true;
  };
}
