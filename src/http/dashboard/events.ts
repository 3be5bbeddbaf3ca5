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
import { allowed, visibleStatuses } from '../rights.ts';
import { errors, type RouteDoc } from '../route-doc.ts';
import { recordRecentEvents, STREAMED, type Streamed } from './recent-events.ts';

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
 * `GET /events`: first `hello` with every instance's status and the recent events, then the facts in STREAMED as
 * they happen, each with the instance's status after it as `instance`; with `?logs=1`, server log lines too, at most
 * `logLinesPerSecond` (the rest are counted as `skipped`). Check-ins go at most one per instance per `checkinEveryMs`.
 */
export function eventRoutes(
  deps: HttpDeps,
  { checkinEveryMs = 1000, keepaliveMs = 15_000, logLinesPerSecond = 200, recentEvents = 100 } = {},
): Hono {
  const { bus, registry, version } = deps;
  const app = new Hono();
  const access = adminAccess(deps);
  const states = statePaths();

  const recent = deps.recent ?? recordRecentEvents(bus, recentEvents);

  app.get('/events', access, (c) => {
    // Only what the client may see: the instances it holds status.read on, their server log with logs.read. Asked
    // per event (can() reads the users file in force), so a right taken away applies to an open stream at once.
    const sees = (key: string) => allowed(c, deps, 'status.read', key);
    const readsLog = (key: string) => allowed(c, deps, 'logs.read', key);
    // A stream a session opened ends with the session: checked at each event and keep-alive.
    const session = c.var.session;
    const ended = () => {
      if (session === undefined) return false;
      const s = deps.sessions?.peek(session);
      return !s || !sessionPrincipal(s, deps.users?.() ?? EMPTY_USERS, deps.admin?.());
    };
    // Hono answers HEAD with the GET handler and drops the body unread: no stream may be left subscribed for it.
    if (c.req.method === 'HEAD')
      return c.body(null, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const withLogs = c.req.query('logs') === '1';
    // Without this header a reverse proxy such as nginx buffers the stream and events arrive in bursts.
    c.header('X-Accel-Buffering', 'no');
    return streamSSE(c, async (stream) => {
      const write = boundedWrites(stream, 1000);
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
      let [second, used, skipped] = [0, 0, 0];
      const onLog = (e: BusEvents['instance:log']) => {
        if (!readsLog(e.key)) return;
        const now = Math.floor(monotonicMs() / 1000);
        if (now !== second) [second, used] = [now, 0];
        if (used >= logLinesPerSecond) return void skipped++;
        used++;
        send('instance:log', { ...e, skipped });
        skipped = 0;
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
        instances: visibleStatuses(c, deps),
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
