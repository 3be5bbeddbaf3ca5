import { join } from 'node:path';
import { Hono, type MiddlewareHandler } from 'hono';
import { stream } from 'hono/streaming';
import type { StreamingApi } from 'hono/utils/stream';
import { can } from '../auth/can.ts';
import type { Permission } from '../auth/permissions.ts';
import { EMPTY_USERS } from '../auth/users-file.ts';
import { followLines, readLastLines } from '../process/log-tail.ts';
import type { InstanceControl } from '../supervisor/contract.ts';
import { ADMIN_CHALLENGE, type AdminEnv, adminAccess, decideAdminAccess } from './admin-auth.ts';
import { instanceDir } from './api-routes.ts';
import type { HttpDeps } from './deps.ts';
import { type AuthStatus, authorizeFor, denied } from './instance-auth.ts';
import { reportRefused } from './refused.ts';
import { shownKey } from './request-info.ts';
import { needs } from './rights.ts';
import { errors, type RouteDoc } from './route-doc.ts';
import { ROUTE_PERMISSIONS } from './route-permissions.ts';
import type { DashboardLog, Logs } from './schemas.ts';

const MAX_LINES = 1000;
const DEFAULT_SECONDS = 600;
const MAX_SECONDS = 3600;
/** Followers at once: each polls a file every 200 ms. */
const MAX_FOLLOWERS = 32;
/** An empty line this often, so proxies keep a quiet stream open and the CLI can tell quiet from dead. */
const KEEPALIVE_MS = 15_000;
/** A client this many writes behind is cut off, so a stalled reader cannot grow the daemon's memory. */
const MAX_PENDING = 1000;

export const logRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /instances/{key}/logs',
    tag: 'logs',
    access: 'instance-or-admin',
    summary: 'the last lines of the server log, or (follow=1) the log followed as NDJSON',
    query: [
      { name: 'lines', type: 'integer', description: `how many of the last lines (default 50, at most ${MAX_LINES})` },
      {
        name: 'follow',
        type: 'string',
        description:
          '1: stream NDJSON: {"key","found"}, the lines and each new one as {"line"}, then {"end":"lifetime","from":B}',
      },
      {
        name: 'seconds',
        type: 'integer',
        description: `how long to follow (default ${DEFAULT_SECONDS}, at most ${MAX_SECONDS})`,
      },
      {
        name: 'from',
        type: 'integer',
        description: 'resume following at this byte offset (the "from" of an earlier end record)',
      },
    ],
    responses: {
      200: { description: 'the lines, or with follow=1 the NDJSON stream (application/x-ndjson)', json: 'Logs' },
      ...errors(400, 401, 403),
      404: { description: 'unknown instance (listed to an Admin or loopback client)', json: 'UnknownInstance' },
      ...errors(405),
      503: `a configured instance still starting, or ${MAX_FOLLOWERS} followers already (with Retry-After)`,
    },
  },
  {
    route: 'get /api/instances/{key}/log',
    tag: 'dashboard',
    access: 'admin',
    summary: 'the last lines of the server log',
    query: [{ name: 'n', type: 'integer', description: `how many lines (default 100, at most ${MAX_LINES})` }],
    responses: { 200: { description: 'the lines', json: 'DashboardLog' }, ...errors(400, 401, 403, 404, 405) },
  },
];

const LOGS = 'GET /instances/:key/logs';

type LogEnv = { Variables: { instance: InstanceControl } };

/**
 * The instance's credentials as for status, or the dashboard's admin rule. An unknown key answered to an admitted
 * admin lists the instances, so a remote CLI can say which exist.
 */
function logAccess(deps: HttpDeps): MiddlewareHandler<LogEnv> {
  const needed = ROUTE_PERMISSIONS[LOGS];
  return async (c, next) => {
    const key = c.req.param('key') ?? '';
    const report = (status: AuthStatus, reason: string, user?: string, permission?: Permission) =>
      reportRefused(deps.bus, c, { route: 'logs', action: 'logs', key, user, status, reason, permission });
    const refuse = (status: AuthStatus, reason: string, user: string | undefined, permission?: Permission) => {
      report(status, reason, user, permission);
      return denied(c, status, reason, permission);
    };
    const auth = await authorizeFor(c.req.header('authorization'), key, deps, [needed]);
    if (auth.ok) {
      c.set('instance', auth.instance);
      return next();
    }
    // A recognised user or key lacking the right: the answer is theirs, not the admin rule's.
    if (auth.permission !== undefined) return refuse(auth.status, auth.reason, auth.user, auth.permission);
    const admin = await decideAdminAccess(c, deps);
    if (admin.ok && admin.principal && !can(admin.principal, needed, key, deps.users?.() ?? EMPTY_USERS))
      return refuse(403, `${admin.user} may not ${needed} on ${shownKey(key)}`, admin.user, needed);
    if (admin.ok) {
      const instance = deps.registry.get(key);
      if (!instance)
        return c.json(
          { error: `no instance ${shownKey(key)}`, instances: deps.registry.list().map((i) => i.key) },
          404,
        );
      c.set('instance', instance);
      return next();
    }
    // Credentials that name this instance, or no Admin configured: the instance rule says what is wrong.
    if (auth.user === key || deps.admin?.() === undefined) return refuse(auth.status, auth.reason, auth.user);
    report(admin.status, admin.error);
    if (admin.status === 401) c.header('WWW-Authenticate', ADMIN_CHALLENGE);
    return c.json({ error: admin.error }, admin.status);
  };
}

/** Writes in order without awaiting each one; aborts the stream once the client falls `max` writes behind. */
export function boundedWrites(out: StreamingApi, max: number): (write: () => Promise<unknown>) => void {
  let pending = 0;
  return (write) => {
    if (out.aborted || out.closed) return;
    if (++pending > max) return out.abort();
    void write()
      .catch(() => undefined)
      .finally(() => pending--);
  };
}

const withPartial = (tail: { lines: string[]; partial: string | null }) =>
  tail.partial === null ? tail.lines : [...tail.lines, tail.partial];

/** A whole-number query parameter from `min` to `max`; `fallback` when absent, null when invalid. */
const whole = <F extends number | undefined>(
  raw: string | undefined,
  fallback: F,
  min: number,
  max: number,
): number | F | null => {
  if (raw === undefined) return fallback;
  return /^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : null;
};

/** `GET /instances/:key/logs` (with `follow=1` NDJSON) and the dashboard's `GET /api/instances/:key/log`. */
export function logRoutes(deps: HttpDeps): Hono {
  const app = new Hono<LogEnv>();
  let followers = 0;

  app.get('/instances/:key/logs', logAccess(deps), async (c) => {
    const key = c.req.param('key');
    const lines = whole(c.req.query('lines'), 50, 0, MAX_LINES);
    const seconds = whole(c.req.query('seconds'), DEFAULT_SECONDS, 1, MAX_SECONDS);
    const from = whole(c.req.query('from'), undefined, 0, Number.MAX_SAFE_INTEGER);
    if (lines === null || seconds === null || from === null) {
      const error = `lines must be a whole number up to ${MAX_LINES}, seconds from 1 to ${MAX_SECONDS}, from a byte offset`;
      return c.json({ error }, 400);
    }
    const logDir = join(instanceDir(c.var.instance), 'logs');
    const tail =
      from === undefined ? await readLastLines(logDir, lines) : { lines: [], partial: null, offset: from, found: true };
    if (c.req.query('follow') !== '1')
      return c.json({ key, found: tail.found, lines: withPartial(tail) } satisfies Logs);
    const headers = {
      'Content-Type': 'application/x-ndjson; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    };
    // Hono answers HEAD with this handler and drops the body unread: never start a follower for it.
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    if (followers >= MAX_FOLLOWERS) {
      c.header('Retry-After', '5');
      return c.json({ error: `too many log followers (${MAX_FOLLOWERS}); try again later` }, 503);
    }
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    followers++;
    return stream(c, async (out) => {
      const write = boundedWrites(out, MAX_PENDING);
      const send = (record: object) => write(() => out.write(`${JSON.stringify(record)}\n`));
      let end: () => void = () => {};
      const until = new Promise<void>((resolve) => (end = resolve));
      const timer = setTimeout(end, seconds * 1000);
      const keepalive = setInterval(() => write(() => out.write('\n')), KEEPALIVE_MS);
      out.onAbort(end);
      try {
        send({ key, found: tail.found });
        for (const line of tail.lines) send({ line });
        const reached = await followLines(logDir, tail.offset, (line) => send({ line }), until);
        send({ end: 'lifetime', from: reached });
      } finally {
        clearTimeout(timer);
        clearInterval(keepalive);
        followers--;
      }
    });
  });

  // The dashboard's tail: the admin rule only, and a line the server is still writing is shown too.
  const dashboard = new Hono<AdminEnv>();
  dashboard.get('/api/instances/:key/log', adminAccess(deps), needs(deps, LOGS), async (c) => {
    const key = c.req.param('key');
    const instance = deps.registry.get(key);
    if (!instance) return c.json({ error: `no instance ${shownKey(key)}` }, 404);
    const n = whole(c.req.query('n'), 100, 1, MAX_LINES);
    if (n === null) return c.json({ error: `n must be a whole number from 1 to ${MAX_LINES}` }, 400);
    const tail = await readLastLines(join(instanceDir(instance), 'logs'), n);
    return c.json({ key, lines: withPartial(tail).slice(-n) } satisfies DashboardLog);
  });

  return new Hono().route('/', app).route('/', dashboard);
}
