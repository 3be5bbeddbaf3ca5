import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

/** The client's address; undefined when there is no socket (app.request() in tests). */
export function remoteAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

/**
 * A handler for the other methods on a known path: 405 with `Allow` (the real watchdog's framework does the same,
 * REFERENCE.md §6.1). Register it with `.all()` after the real handlers.
 */
export function methodNotAllowed(allow: string) {
  return (c: Context): Response => {
    c.header('Allow', allow);
    return c.json({ error: `method ${c.req.method} not allowed; use ${allow}` }, 405);
  };
}
