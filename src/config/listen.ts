import { BlockList, isIP } from 'node:net';

/**
 * One address the HTTP server binds, from `Urls`. `localhost` is kept as a name: it binds 127.0.0.1 and, where
 * the host has IPv6, ::1 on the same port (as Kestrel does); `*` (also written `+`) is every interface of both
 * families (`::` dual-stack, `0.0.0.0` where the host has no IPv6); `0.0.0.0` is every IPv4 interface.
 */
export interface ListenAddress {
  host: string;
  port: number;
}

const EXPECTED = 'expected http://<host>:<port> such as http://localhost:5000 or http://*:5000';

/** Parses `Urls` as Kestrel spells it: addresses separated by `;`, each bound; port 0 picks a free port (tests). */
export function parseUrls(value: string): { ok: true; listen: ListenAddress[] } | { ok: false; expected: string } {
  const parts = value
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) return { ok: false, expected: EXPECTED };
  const listen: ListenAddress[] = [];
  for (const part of parts) {
    const m = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[^/:[\]\s]+):(\d{1,5})\/?$/.exec(part);
    const where = parts.length > 1 ? ` (in ${JSON.stringify(part)})` : '';
    if (!m) return { ok: false, expected: EXPECTED + where };
    const [, scheme, rawHost = '', rawPort = ''] = m;
    if (scheme?.toLowerCase() === 'https') {
      return {
        ok: false,
        expected: `expected an http:// address (this watchdog does not terminate TLS; put a proxy in front for https)${where}`,
      };
    }
    const port = Number(rawPort);
    if (port > 65535) return { ok: false, expected: `${EXPECTED} (port 0-65535)${where}` };
    let host = rawHost;
    if (host === '*' || host === '+') host = '*';
    else if (host.toLowerCase() === 'localhost') host = 'localhost';
    else if (host.startsWith('[')) host = host.slice(1, -1);
    // What the pattern lets through but no listen() takes: brackets around anything but an IPv6 address
    // (`[::::]`), and four numbers that are no IPv4 address (`999.1.1.1`). Refused here, not at start.
    if (rawHost.startsWith('[') && isIP(host) !== 6)
      return { ok: false, expected: `expected an IPv6 address inside [ ], such as http://[::1]:5000${where}` };
    if (/^\d+\.\d+\.\d+\.\d+$/.test(host) && isIP(host) !== 4)
      return {
        ok: false,
        expected: `expected an IPv4 address of four numbers 0-255, such as http://127.0.0.1:5000${where}`,
      };
    listen.push({ host, port });
  }
  return { ok: true, listen };
}

/** `http://host:port`, an IPv6 host in brackets. */
export const listenUrl = (a: ListenAddress) => `http://${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8, ::1 and IPv4-mapped 127.x (`::ffff:127.0.0.1`, which BlockList matches against the IPv4 subnet). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A listen address only this machine can reach: `localhost` or a loopback address (not `*`, `0.0.0.0`, a LAN IP). */
export function listensOnLoopbackOnly(address: ListenAddress): boolean {
  return address.host === 'localhost' || isLoopback(address.host);
}
