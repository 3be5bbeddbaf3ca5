import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DiskReading } from '../bus.ts';
import { authorize } from './authorize.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import { healthBody } from './health.ts';

/** Answers a request before the Hono app sees it, or returns false to leave it to the app. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

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

/** The first of `paths` that answers. */
export const firstOf =
  (...paths: FastPath[]): FastPath =>
  (req, res) =>
    paths.some((p) => p(req, res));
