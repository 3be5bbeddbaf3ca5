import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BENCH = join(ROOT, 'bench');
export const WATCHDOG = join(ROOT, 'bin/watchdog');

export interface TempDir {
  path: string;
  cleanup(): Promise<void>;
}

export async function tempDir(prefix: string): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true, maxRetries: 3 }) };
}

/** Binds `port` on 127.0.0.1 and lets it go: true when it was free. */
function tryPort(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** The kernel's ephemeral range (outgoing connections take their local port from it). */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo && hi) return [lo, hi];
  } catch {
    // Not Linux: assume the IANA range.
  }
  return [49152, 65535];
}

/**
 * `count` distinct loopback ports that were free a moment ago, below the ephemeral range. Ports handed out by
 * binding to 0 come from that range, and so do the local ports of outgoing connections: with 200 servers each
 * holding a check-in connection, one of them would sooner or later sit on a port another server is about to
 * listen on (EADDRINUSE). Starts at a random place so parallel runs rarely meet.
 */
export async function freePorts(count: number): Promise<number[]> {
  const [ephemeralLo] = ephemeralRange();
  const lo = 10_000;
  const hi = Math.max(lo + count * 4, ephemeralLo - 1);
  const span = hi - lo;
  const start = lo + Math.floor(Math.random() * span);
  const ports: number[] = [];
  for (let i = 0; i < span && ports.length < count; i++) {
    const port = lo + ((start - lo + i) % span);
    if (await tryPort(port)) ports.push(port);
  }
  if (ports.length < count)
    throw new Error(`could find only ${ports.length} of ${count} free loopback ports in ${lo}-${hi}`);
  return ports;
}
