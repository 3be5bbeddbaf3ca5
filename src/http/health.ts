import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { Health } from './route-doc.ts';

/**
 * The body of `GET /health`. pid lets the daemon check at start that BaseUrl reaches this very process
 * (src/daemon/base-url-check.ts); the uptime is the process's.
 */
export function healthBody(registry: InstanceRegistry, version: string): Health {
  const instances: Record<string, string> = {};
  for (const inst of registry.list()) instances[inst.key] = inst.status().state;
  return { status: 'ok', version, pid: process.pid, uptimeSeconds: Math.floor(process.uptime()), instances };
}
