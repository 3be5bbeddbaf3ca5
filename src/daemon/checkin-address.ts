import { isIP, isIPv4 } from 'node:net';
import type { BoundAddress } from '../http/server.ts';

const ANY = new Set(['0.0.0.0', '::']);
const LOOPBACK = new Set(['127.0.0.1', '::1']);
const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/**
 * Where servers check in: where we listen, loopback if we can, never `BaseUrl` (a lost check-in kills a healthy server
 * as hung). Spelt as the real watchdog's Kestrel address (`http://localhost:5000`), so its adopted servers agree.
 */
export function checkinBaseUrl(bound: readonly BoundAddress[]): string {
  const first = bound[0];
  if (!first) throw new Error('the daemon listens nowhere, so servers have nowhere to check in');
  // By preference; a dual-stack `::` socket takes IPv4 too, and 127.0.0.1 works wherever a server resolves names.
  const choices: Array<[(b: BoundAddress) => boolean, (b: BoundAddress) => string]> = [
    [(b) => b.name === 'localhost', () => 'localhost'],
    [(b) => b.host.startsWith('127.'), (b) => b.host],
    [(b) => ANY.has(b.host), () => '127.0.0.1'],
    [(b) => b.host === '::1', () => '::1'],
  ];
  for (const [test, host] of choices) {
    const b = bound.find(test);
    if (b) return `http://${urlHost(host(b))}:${b.port}`;
  }
  return first.url;
}

/** Whether a server told to check in at `url` reaches this daemon (a port we listen on, at the host we bound). */
export function reachesUs(url: string, bound: readonly BoundAddress[]): boolean {
  const u = URL.canParse(url) ? new URL(url) : null;
  if (u?.protocol !== 'http:') return false;
  const port = Number(u.port || 80);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bound.some((b) => {
    if (b.port !== port) return false;
    if (b.host === host || (b.host === '::' && isIP(host) !== 0)) return true;
    if (host === 'localhost') return LOOPBACK.has(b.host) || ANY.has(b.host);
    return b.host === '0.0.0.0' && isIPv4(host);
  });
}
