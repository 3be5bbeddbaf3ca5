import type { IncomingMessage } from 'node:http';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import { authorize } from './authorize.ts';
import type { FastPath } from './fast-path.ts';

const PREFIX = '/server_api/';
const SUFFIX = '/ping';

/**
 * The accepted check-in, answered on node:http directly: every server sends one every 15 s for as long as it runs,
 * and Hono's request, context and response objects cost about a third of the throughput of a bare node:http
 * server (bench/RESULTS.md, check-in throughput). Only the plain success takes this path, with the same answer as
 * the app's route (src/http/ping-routes.ts): anything else (another method, a query, an odd key, any refusal with
 * its status, challenge and `checkin:rejected` fact) goes on to that route, which stays the whole definition.
 */
export function checkinFastPath(
  registry: InstanceRegistry,
  /** Told of each accepted check-in (the connection guard keeps such connections: connection-guard.ts). */
  onAccepted?: (req: IncomingMessage) => void,
): FastPath {
  return (req, res) => {
    const url = req.url ?? '';
    if (req.method !== 'POST' || !url.startsWith(PREFIX) || !url.endsWith(SUFFIX)) return false;
    const raw = url.slice(PREFIX.length, -SUFFIX.length);
    if (raw === '' || raw.includes('/') || raw.includes('?') || raw.includes('%')) return false;
    const auth = authorize(req.headers.authorization, raw, registry, 'checkinSecret');
    if (!auth.ok) return false;
    auth.instance.checkin();
    onAccepted?.(req);
    req.resume(); // a body, if any, is not read: drain it so the connection stays usable
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8', 'Content-Length': '0' }).end();
    return true;
  };
}
