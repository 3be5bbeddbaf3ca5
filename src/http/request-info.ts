import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { parseProxyRange } from '../config/sections/proxy.ts';

/** Who sent a request, as far as the daemon may believe it. */
export interface ClientInfo {
  /** The client: the socket peer, or the forwarded client when the peer is a trusted proxy; undefined if unknown. */
  address: string | undefined;
  peer: string | undefined;
  /** The peer is a trusted proxy and the request carried a forwarded client address. */
  forwarded: boolean;
  /**
   * The request names a proxy (`X-Forwarded-For`, `Forwarded`, `Via`, `X-Real-IP`) but its peer is not a trusted
   * one: the peer's address says nothing about the client (a proxy on this machine makes every client look local).
   */
  untrustedProxy: string | null;
  /** The socket peer is one of TrustedProxies: headers it sets on its clients' behalf may be believed. */
  trustedPeer: boolean;
}

/** The headers a request reads them from (lower-case names, as Hono's `c.req.header(name)` takes them). */
export type HeaderOf = (name: string) => string | undefined;

const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'via', 'x-real-ip'] as const;
const MAX_HOPS = 32;

const matchers = new WeakMap<readonly string[], BlockList>();

/** A BlockList of `TrustedProxies`, made once per configured list (a reload makes a new list). */
function trustList(entries: readonly string[]): BlockList {
  let list = matchers.get(entries);
  if (!list) {
    list = new BlockList();
    for (const e of entries) {
      const r = parseProxyRange(e);
      if (r) list.addSubnet(r.address, r.prefix, r.family);
    }
    matchers.set(entries, list);
  }
  return list;
}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) as `10.0.0.1`; anything not an address as undefined. */
export function plainAddress(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = v4 ?? address;
  return isIP(plain) === 0 ? undefined : plain;
}

function trusted(list: BlockList, address: string | undefined): boolean {
  if (address === undefined) return false;
  return list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The hops a request names, nearest client first: `X-Forwarded-For` when present (what nginx, Caddy, Traefik and
 * HAProxy append to), else the `for=` of `Forwarded` (RFC 7239). An entry that is no address (`unknown`, an
 * obfuscated `_id`) stays in the list as undefined: it ends the walk without naming anyone.
 */
export function forwardedChain(header: HeaderOf): Array<string | undefined> {
  const xff = header('x-forwarded-for');
  if (xff !== undefined)
    return xff
      .split(',')
      .slice(-MAX_HOPS)
      .map((s) => plainAddress(stripPort(s.trim())));
  const fwd = header('forwarded');
  if (fwd === undefined) return [];
  const hops: Array<string | undefined> = [];
  for (const element of fwd.split(',').slice(-MAX_HOPS)) {
    const m = /(?:^|;)\s*for=("?)([^";]*)\1/i.exec(element.trim());
    hops.push(m ? plainAddress(stripPort(m[2] ?? '')) : undefined);
  }
  return hops;
}

/** `[::1]:1234` → `::1`, `10.0.0.1:1234` → `10.0.0.1`; a bare IPv6 address is left whole. */
function stripPort(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1] ?? '';
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(hop);
  return v4?.[1] ?? hop;
}

/**
 * Who the client is: the socket peer, unless the peer is one of `trustedProxies`; then the forwarded chain is walked
 * from the nearest hop back, past every trusted proxy, and the first hop that is not one is the client (one the
 * client wrote itself, further left, is never believed). A trusted peer that forwards nothing is itself the client
 * (a CLI on the proxy's machine).
 */
export function clientInfo(
  peerAddress: string | undefined,
  header: HeaderOf,
  trustedProxies: readonly string[],
): ClientInfo {
  const peer = plainAddress(peerAddress);
  const list = trustList(trustedProxies);
  if (!trusted(list, peer)) {
    const named = PROXY_HEADERS.find((h) => header(h) !== undefined);
    return { address: peer, peer, forwarded: false, untrustedProxy: named ?? null, trustedPeer: false };
  }
  const chain = forwardedChain(header);
  if (chain.length === 0) return { address: peer, peer, forwarded: false, untrustedProxy: null, trustedPeer: true };
  let client: string | undefined;
  for (let i = chain.length - 1; i >= 0; i--) {
    client = chain[i];
    if (!trusted(list, client)) break;
  }
  return { address: client, peer, forwarded: true, untrustedProxy: null, trustedPeer: true };
}

/** The socket peer's address; undefined when there is no socket (app.request() in tests). */
function peerAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

const CLIENT = 'watchdogClient';

/**
 * Works out who sent each request once (`clientInfo`), with `TrustedProxies` read per request so a reload applies;
 * `remoteAddress` and `clientOf` read it. Registered on the whole app before any route.
 */
export function clientAddresses(trustedProxies: () => readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    c.set(
      CLIENT,
      clientInfo(peerAddress(c), (name) => c.req.header(name), trustedProxies()),
    );
    await next();
  };
}

/** Who sent the request; without the middleware (a route tested alone) the socket peer, no proxy trusted. */
export function clientOf(c: Context): ClientInfo {
  const set: unknown = c.get(CLIENT);
  return (set as ClientInfo | undefined) ?? clientInfo(peerAddress(c), (name) => c.req.header(name), []);
}

/** The client's address (the forwarded one from a trusted proxy); undefined when unknown. */
export function remoteAddress(c: Context): string | undefined {
  return clientOf(c).address;
}

/** The answer to another method on a known path: 405 with `Allow` (createApp registers one per route path). */
export function methodNotAllowed(allow: string) {
  return (c: Context): Response => {
    c.header('Allow', allow);
    return c.json({ error: `method ${c.req.method} not allowed; use ${allow}` }, 405);
  };
}

const MAX_SHOWN = 200;

/**
 * A route key as it may appear in logs, audit lines and bus events: anyone can send any key, so control characters
 * (terminal escapes in a TTY log) become `?` and very long keys are cut. Configured keys are never altered.
 */
export function shownKey(key: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
  const clean = key.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > MAX_SHOWN ? `${clean.slice(0, MAX_SHOWN)}…` : clean;
}
