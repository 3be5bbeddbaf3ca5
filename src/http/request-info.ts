import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { parseProxyRange } from '../config/sections/proxy.ts';
import { formatBytes } from '../store/disk-space.ts';

/**
 * Who sent a request, as far as the daemon may believe it. `untrustedProxy`: the proxy header a request from an
 * untrusted peer carries (a proxy on this machine makes every client look local); `trustedPeer`: the peer is one of
 * TrustedProxies, so headers it sets on its clients' behalf may be believed.
 */
type ClientInfo = {
  address: string | undefined;
  peer: string | undefined;
  forwarded: boolean;
  untrustedProxy: string | null;
  trustedPeer: boolean;
};

type HeaderOf = (name: string) => string | undefined;

const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'via', 'x-real-ip'] as const;
const MAX_HOPS = 32;

const matchers = new WeakMap<readonly string[], BlockList>();

/** Made once per configured list (a reload makes a new list). */
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
  const plain = (address && /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]) || address;
  return plain && isIP(plain) !== 0 ? plain : undefined;
}

const trusted = (list: BlockList, address: string | undefined): boolean =>
  address !== undefined && list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');

/**
 * The hops a request names: `X-Forwarded-For` when present (what nginx, Caddy, Traefik and HAProxy append to), else
 * the `for=` of `Forwarded` (RFC 7239). A hop that is no address (`unknown`, `_id`) stays as undefined: it ends the
 * walk without naming anyone.
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
 * The socket peer, unless it is a trusted proxy: then the first hop from the right that is no trusted proxy (one the
 * client wrote itself, further left, is never believed), or the peer itself when it forwards nothing.
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

/** Works out who sent each request once, for `clientOf`; `TrustedProxies` is read per request. */
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

export const remoteAddress = (c: Context): string | undefined => clientOf(c).address;

/** 413 for a body over `maxSize` bytes, refused unread. */
export const limitBody = (maxSize: number, what = 'body') =>
  bodyLimit({ maxSize, onError: (c) => c.json({ error: `the ${what} is larger than ${formatBytes(maxSize)}` }, 413) });

/**
 * A key anyone can send, as logs, audit lines and bus events show it: control characters (terminal escapes in a TTY
 * log) become `?`, and it is cut at 200 characters. Configured keys are never altered.
 */
export function shownKey(key: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
  const clean = key.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
