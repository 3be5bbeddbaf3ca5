import { readFileSync } from 'node:fs';
import type { ConnectionsSettings } from '../config/sections/connections.ts';

/** Caps and timeouts for the daemon's listening sockets, in numbers (connection-guard.ts, server.ts). */
export interface ConnectionLimits {
  maxConnections: number;
  maxPerSource: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** Descriptors kept for launches (pipes), logs, data.json and the daemon itself, whatever connections do. */
const KEEP_FREE = 64;
/** Past this, more connections buy nothing a watchdog needs, and each costs memory. */
const CEILING = 4096;
/** A process with no readable limit (not Linux): Node's usual soft limit elsewhere is far above this. */
const UNKNOWN_LIMIT = 1024;

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
 * The limits in effect: what `Connections` sets, and for the caps it leaves unset, half the descriptor limit (at
 * least 8, at most 4096, and always leaving 64 descriptors free), a source half of that. Half, so that launches,
 * log files, downloads and the webhook always find a descriptor however many connections strangers open.
 */
export function connectionLimits(settings: ConnectionsSettings, fdLimit = descriptorLimit()): ConnectionLimits {
  const fds = fdLimit ?? UNKNOWN_LIMIT;
  const derived = Math.max(8, Math.min(CEILING, Math.floor(fds / 2), fds - KEEP_FREE));
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
