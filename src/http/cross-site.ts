import type { Context, MiddlewareHandler } from 'hono';
import type { HttpDeps } from './deps.ts';
import { reportRefused } from './refused.ts';
import { shownKey } from './request-info.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The check-in routes: game servers post there, and they are no browsers. */
const CHECKIN_PREFIX = '/server_api/';

/**
 * Why a browser marked this request as sent on behalf of another site, or null. A browser that once answered a
 * Basic-auth prompt sends those credentials with any form POST to this origin, from any page; it also says where the
 * request comes from (`Sec-Fetch-Site`, `Origin`), which a page cannot change. The CLI, a CDN and curl send neither.
 * An Origin naming one of `ownOrigins`, or the request's Host, is own.
 */
export function crossSiteReason(
  header: (name: string) => string | undefined,
  ownOrigins: readonly string[],
): string | null {
  const site = header('sec-fetch-site')?.trim().toLowerCase();
  const origin = header('origin');
  if (site === 'cross-site') return 'the browser marked it as sent from another site (Sec-Fetch-Site: cross-site)';
  if (origin !== undefined) {
    if (isOwnOrigin(origin.trim(), header('host'), ownOrigins)) return null;
    return `it comes from a page on ${JSON.stringify(shownKey(origin))}, not from this watchdog (Origin)`;
  }
  if (site === 'same-site')
    return 'the browser marked it as sent from another origin of this site (Sec-Fetch-Site: same-site)';
  return null;
}

const urlOf = (text: string): URL | null => (URL.canParse(text) ? new URL(text) : null);

function isOwnOrigin(origin: string, host: string | undefined, ownOrigins: readonly string[]): boolean {
  const url = urlOf(origin);
  // `null` (a sandboxed page, a file) or junk is nobody's own.
  if (!url || url.origin === 'null' || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  if (ownOrigins.some((o) => urlOf(o)?.origin === url.origin)) return true;
  // The scheme is not compared: behind a TLS-terminating proxy the page is https and the request reaches us as http.
  return host !== undefined && urlOf(`${url.protocol}//${host.trim()}`)?.host === url.host;
}

/** `POST /instances/<key>/<action>` and `/api/instances/<key>/<action>`: the audit line's key and action. */
function auditTarget(c: Context): { key?: string; action?: string } {
  const m = /^\/(?:api\/)?instances\/([^/]+)\/([^/]+)$/.exec(c.req.path);
  return m ? { key: decodeURIComponentSafe(m[1] ?? ''), action: m[2] ?? '' } : {};
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** 403 for every state-changing request a browser marked as cross-site, on every route but the check-ins. */
export function crossSiteGuard(opts: Pick<HttpDeps, 'bus' | 'ownOrigins'>): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method) || c.req.path.startsWith(CHECKIN_PREFIX)) return next();
    const reason = crossSiteReason((name) => c.req.header(name), opts.ownOrigins?.() ?? []);
    if (reason === null) return next();
    const error = `cross-site request refused: ${reason}; control requests come from the CLI, curl, a CDN or the dashboard on this watchdog's own address`;
    // Sent before any credentials, so a stranger can repeat it at will: rate-limited by source like every such
    // refusal (the first in full in the daemon's log and audit.log, then summaries), never a line per request.
    reportRefused(opts.bus, c, { route: 'cross-site', ...auditTarget(c), status: 403, reason: error });
    return c.json({ error }, 403);
  };
}
