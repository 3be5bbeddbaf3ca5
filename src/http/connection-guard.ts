import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionsSettings } from '../config/sections/connections.ts';
import type { ConnectionFigures } from '../metrics/collector.ts';

/** Why a connection was refused or evicted: the total cap, or its source's. Bounded labels for the metrics. */
type ConnectionCap = keyof ConnectionFigures['refused'];

interface Held {
  source: string;
  /** Requests in flight (headers received, response not finished): such a connection is never evicted. */
  busy: number;
  /** Requests answered on it: a keep-alive connection a client has used is kept over one that never sent one. */
  served: number;
  trusted: boolean;
}

/** What a refused client reads, if it reads at all; then the socket is destroyed, its descriptor freed at once. */
const REFUSAL =
  'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 40\r\n\r\n' +
  'too many connections; try again shortly\n';

/**
 * Caps the daemon's HTTP connections, in total and per client address, without starving check-ins. At a cap the
 * new connection takes the place of one that never carried an accepted check-in: the oldest that has not completed
 * a request, else the oldest idle one, else the oldest in flight; only when every one carried a check-in is the new
 * one refused. So the per-source cap (game servers and strangers may share 127.0.0.1) never refuses a client while
 * an idle stranger holds a slot.
 */
export function createConnectionGuard(limits: { maxConnections: number; maxPerSource: number }) {
  // Insertion order is connection order: the first evictable one found is the oldest.
  const held = new Map<Socket, Held>();
  const bySource = new Map<string, Set<Socket>>();
  const refused: Record<ConnectionCap, number> = { total: 0, source: 0 };
  const evicted: Record<ConnectionCap, number> = { total: 0, source: 0 };

  /**
   * The connection to give way, in the order above. An idle keep-alive one comes second: a CLI reusing it may see a
   * reset. A busy one comes last, not never: a body trickled in byte by byte keeps a request in flight too.
   */
  const evictable = (sockets: Iterable<Socket>): Socket | undefined => {
    let idle: Socket | undefined;
    let busy: Socket | undefined;
    for (const s of sockets) {
      const h = held.get(s);
      if (!h || h.trusted) continue;
      if (h.busy > 0) busy ??= s;
      else if (h.served > 0) idle ??= s;
      else return s;
    }
    return idle ?? busy;
  };

  const release = (socket: Socket) => {
    const h = held.get(socket);
    if (!h) return;
    held.delete(socket);
    const peers = bySource.get(h.source);
    peers?.delete(socket);
    if (peers?.size === 0) bySource.delete(h.source);
  };

  /** Frees a slot under `cap` for a new connection: true when there is one (now), false to refuse. */
  const makeRoom = (cap: ConnectionCap, among: Iterable<Socket>): boolean => {
    const victim = evictable(among);
    if (!victim) return false;
    evicted[cap] += 1;
    release(victim);
    victim.destroy();
    return true;
  };

  const admit = (socket: Socket) => {
    const source = socket.remoteAddress ?? 'unknown';
    const peers = bySource.get(source);
    const room =
      ((peers?.size ?? 0) < limits.maxPerSource || makeRoom('source', peers ?? [])) &&
      (held.size < limits.maxConnections || makeRoom('total', held.keys()));
    if (!room) {
      refused[(peers?.size ?? 0) >= limits.maxPerSource ? 'source' : 'total'] += 1;
      socket.on('error', () => undefined);
      socket.write(REFUSAL);
      socket.destroy();
      return;
    }
    held.set(socket, { source, busy: 0, served: 0, trusted: false });
    // Looked up again: making room may have emptied and dropped this source's set.
    const set = bySource.get(source) ?? new Set<Socket>();
    set.add(socket);
    bySource.set(source, set);
    socket.once('close', () => release(socket));
  };

  return {
    /** Puts a listening server's connections under the caps (every server of the daemon shares them). */
    attach(server: Server) {
      // After node:http's own listener (added when the server was made): a socket destroyed here simply closes.
      server.on('connection', admit);
      server.on('request', (req, res) => {
        const h = held.get(req.socket);
        if (!h) return;
        h.busy += 1;
        res.once('close', () => {
          h.busy -= 1;
          h.served += 1;
        });
      });
    },
    /** The connection carried an accepted check-in: it is never evicted. */
    trust(socket: Socket) {
      const h = held.get(socket);
      if (h) h.trusted = true;
    },
    counts: (): ConnectionFigures => ({ open: held.size, refused: { ...refused }, evicted: { ...evicted } }),
  };
}

export type ConnectionLimits = ReturnType<typeof connectionLimits>;
export type ConnectionGuard = ReturnType<typeof createConnectionGuard>;

/** The soft "Max open files" limit of this process, from `/proc/self/limits`; null where that cannot be read. */
export function descriptorLimit(text?: string): number | null {
  let limits = text;
  if (limits === undefined) {
    try {
      limits = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return null;
    }
  }
  const m = /^Max open files\s+(\S+)/m.exec(limits);
  if (!m?.[1] || m[1] === 'unlimited') return m?.[1] === 'unlimited' ? Number.POSITIVE_INFINITY : null;
  const n = Number(m[1]);
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * What `Connections` sets, and for the caps it leaves unset half the descriptor limit (1024 where it cannot be read),
 * at least 8, at most 4096 (more buy a watchdog nothing), always leaving 64 free; a source half of that. Half, so
 * that launches, log files, downloads and the webhook always find a descriptor however many connections strangers open.
 */
export function connectionLimits(settings: ConnectionsSettings, fdLimit = descriptorLimit()) {
  const fds = fdLimit ?? 1024;
  const derived = Math.max(8, Math.min(4096, Math.floor(fds / 2), fds - 64));
  const maxConnections = settings.MaxConnections ?? derived;
  return {
    maxConnections,
    maxPerSource:
      settings.MaxConnectionsPerSource ?? Math.max(1, Math.min(maxConnections, Math.ceil(maxConnections / 2))),
    headersTimeoutMs: settings.HeadersTimeoutSeconds * 1000,
    requestTimeoutMs: settings.RequestTimeoutSeconds * 1000,
    keepAliveTimeoutMs: settings.KeepAliveTimeoutSeconds * 1000,
  };
}
