import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { EMPTY_USERS } from '../../auth/users-file.ts';
import type { BusEvents } from '../../bus.ts';
import { statePaths } from '../../chart/graph.ts';
import { monotonicMs } from '../../clock.ts';
import { sessionPrincipal } from '../account-access.ts';
import { adminAccess } from '../admin-auth.ts';
import type { HttpDeps } from '../deps.ts';
import { boundedWrites } from '../log-routes.ts';
import { allowed } from '../rights.ts';
import { errors, type RouteDoc } from '../route-doc.ts';
import { recordRecentEvents, STREAMED, type Streamed } from './recent-events.ts';

export interface EventStreamOptions {
  /** At most one `instance:checkin` per instance per this many ms (servers may check in several times a second). */
  checkinEveryMs?: number;
  /** Comment line sent this often so proxies keep an idle stream open. */
  keepaliveMs?: number;
  /** Server log lines per second per client (`?logs=1`); the excess is dropped and counted. */
  logLinesPerSecond?: number;
  /** How many past events `hello` carries when `deps.recent` is not given. */
  recentEvents?: number;
}

export const eventRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /events',
    tag: 'dashboard',
    access: 'admin',
    summary: "the dashboard's live feed: hello (every instance's status, recent events), then each event as it happens",
    query: [{ name: 'logs', type: 'string', description: '1: server log lines too (instance:log)' }],
    responses: {
      200: { description: 'Server-Sent Events', media: 'text/event-stream' },
      ...errors(400, 401, 403, 405),
    },
  },
];

/**
 * `GET /events`: Server-Sent Events for the dashboard. First `hello` with every instance's status and the recent
 * listed events (`recent`, oldest first, `{ type, event }`), then the facts in STREAMED as they happen; instance
 * events carry the instance's status after the fact as `instance`. With `?logs=1`, server log lines too
 * (`instance:log`), rate-limited. Subscribes inside the stream and unsubscribes on abort.
 */
export function eventRoutes(deps: HttpDeps, opts: EventStreamOptions = {}): Hono {
  const { bus, registry, version } = deps;
  const checkinEveryMs = opts.checkinEveryMs ?? 1000;
  const keepaliveMs = opts.keepaliveMs ?? 15_000;
  const logRate = opts.logLinesPerSecond ?? 200;
  // A client this many writes behind is disconnected, so a stalled browser cannot grow the daemon's memory.
  const maxPending = 1000;
  const app = new Hono();
  const access = adminAccess(deps);
  const states = statePaths();

  const recent = deps.recent ?? recordRecentEvents(bus, opts.recentEvents);

  app.get('/events', access, (c) => {
    // Only what the client may see: the instances it holds status.read on, their server log with logs.read. Asked
    // per event (can() reads the users file in force), so a right taken away applies to an open stream at once.
    const sees = (key: string) => allowed(c, deps, 'status.read', key);
    const readsLog = (key: string) => allowed(c, deps, 'logs.read', key);
    // A stream a session opened ends with the session (logged out, expired, its user removed or given a new
    // password): checked at each event and keep-alive.
    const session = c.var.session;
    const ended = () => {
      if (session === undefined) return false;
      const s = deps.sessions?.peek(session);
      return !s || !sessionPrincipal(s, deps.users?.() ?? EMPTY_USERS, deps.admin?.());
    };
    // Hono answers HEAD with the GET handler and drops the body unread, which would leave a stream subscribed for ever.
    if (c.req.method === 'HEAD')
      return c.body(null, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const withLogs = c.req.query('logs') === '1';
    // Without this header a reverse proxy such as nginx buffers the stream and events arrive in bursts.
    c.header('X-Accel-Buffering', 'no');
    return streamSSE(c, async (stream) => {
      const write = boundedWrites(stream, maxPending);
      const send = (event: string, data: unknown) =>
        write(() => stream.writeSSE({ event, data: JSON.stringify(data) }));
      const statusOf = (key: string) => registry.get(key)?.status() ?? null;
      const lastCheckin = new Map<string, number>();
      const handlers = new Map<Streamed, (e: BusEvents[Streamed]) => void>();
      for (const type of STREAMED) {
        handlers.set(type, (e) => {
          if (!sees(e.key)) return;
          if (ended()) return stream.abort();
          if (type === 'instance:checkin') {
            const prev = lastCheckin.get(e.key) ?? -Infinity;
            const now = monotonicMs();
            if (now - prev < checkinEveryMs) return;
            lastCheckin.set(e.key, now);
          }
          send(type, type === 'instance:control' ? e : { ...e, instance: statusOf(e.key) });
        });
      }
      const logLimiter = rateLimiter(logRate);
      const onLog = (e: BusEvents['instance:log']) => {
        if (!readsLog(e.key)) return;
        const skipped = logLimiter();
        if (skipped !== null) send('instance:log', { ...e, skipped });
      };

      let wake: () => void = () => {};
      let timer: NodeJS.Timeout | undefined;
      const unsubscribe = () => {
        for (const [type, h] of handlers) bus.off(type, h);
        bus.off('instance:log', onLog);
        clearTimeout(timer);
        wake();
      };
      stream.onAbort(unsubscribe);

      send('hello', {
        version,
        now: Date.now(),
        states,
        instances: registry
          .list()
          .filter((i) => sees(i.key))
          .map((i) => i.status()),
        recent: recent.list().filter((r) => sees(r.event.key)),
        // The event names to listen for, so the page's list cannot drift from this one.
        events: withLogs ? [...STREAMED, 'instance:log'] : STREAMED,
      });
      for (const [type, h] of handlers) bus.on(type, h);
      if (withLogs) bus.on('instance:log', onLog);

      // Sleeps that an abort cuts short: stream.sleep() would hold the shutdown up for a whole keep-alive period.
      while (!stream.aborted && !stream.closed) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, keepaliveMs);
        });
        if (ended()) stream.abort();
        else if (!stream.aborted) write(() => stream.write(': keepalive\n\n'));
      }
      unsubscribe();
    });
  });
  return app;
}

/**
 * Allows `perSecond` calls in each second. Returns null for a dropped call, else how many were dropped
 * since the last allowed one (so the client can say "n lines skipped").
 */
function rateLimiter(perSecond: number): () => number | null {
  let second = 0;
  let used = 0;
  let dropped = 0;
  return () => {
    const now = Math.floor(monotonicMs() / 1000);
    if (now !== second) {
      second = now;
      used = 0;
    }
    if (used >= perSecond) {
      dropped++;
      return null;
    }
    used++;
    const d = dropped;
    dropped = 0;
    return d;
  };
}
