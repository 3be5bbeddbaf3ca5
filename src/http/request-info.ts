import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { type ClientInfo, clientInfo } from './forwarded.ts';

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
 * Works out who sent each request once (forwarded.ts), with `TrustedProxies` read per request so a reload applies;
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

/**
 * A handler for the other methods on a known path: 405 with `Allow` (the real watchdog's ASP.NET routing does the
 * same). Register it with `.all()` after the real handlers.
 */
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
