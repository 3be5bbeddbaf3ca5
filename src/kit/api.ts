import { type Context, Hono } from 'hono';
import { createLogger, type Logger } from '../log.ts';
import {
  checkWatchdogToken,
  infoForWire,
  type Parsed,
  parseShutdownBody,
  parseUpdateBody,
  type ShutdownRequest,
  type UpdateRequest,
} from './api-watchdog.ts';
import type { Info, Status } from './schemas.ts';

export {
  type ShutdownRequest,
  sameSecret,
  UPDATE_REASONS,
  type UpdateReason,
  type UpdateRequest,
} from './api-watchdog.ts';

type MaybePromise<T> = T | Promise<T>;

export interface GameApiOptions {
  /** Games may add fields; `tags` defaults to `[]`, as the engine always sends it. */
  status: () => MaybePromise<Status>;
  /** The connect address is written under both spellings; `links` defaults to `[]`. */
  info: () => MaybePromise<Info>;
  /** The `watchdog.token` cvar, read per request; empty or undefined turns /shutdown and /update off (404). */
  watchdogToken: () => string | undefined;
  /** The watchdog asked for a shutdown. Answer fast: the 200 is sent once this resolves. */
  onShutdown: (request: ShutdownRequest) => MaybePromise<void>;
  /** The game restarts when it suits it (at round end, say). */
  onUpdate: (request: UpdateRequest) => MaybePromise<void>;
  log?: Logger;
}

/**
 * The game server's HTTP API as a Hono app: `GET|HEAD /status`, `GET|HEAD /info`, `POST /shutdown`, `POST /update`,
 * else 404. Games may add routes, or mount it with `app.route('/', createGameApi(...))`.
 *
 * @example
 * const app = createGameApi({ status: () => ({ name: 'x', players: 0 }), info, watchdogToken: () => settings.string('watchdog.token'), onShutdown, onUpdate });
 * serve({ fetch: app.fetch, port: 1212, hostname: '127.0.0.1' });
 */
export function createGameApi(opts: GameApiOptions): Hono {
  const log = opts.log ?? createLogger('kit:api');
  const app = new Hono();

  // Hono answers HEAD from the GET handler with the same headers and no body.
  app.get('/status', async (c) => {
    const status = await opts.status();
    c.header('Access-Control-Allow-Origin', '*');
    return c.json({ ...status, tags: status.tags ?? [] });
  });

  app.get('/info', async (c) => {
    const info = await opts.info();
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(infoForWire({ ...info, links: info.links ?? [] }));
  });

  const refuse = (c: Context, route: string): Response | undefined => {
    const refusal = checkWatchdogToken(c.req.header('WatchdogToken'), opts.watchdogToken());
    if (!refusal) return undefined;
    if (refusal.status === 404) log.warn(`${route} refused: watchdog.token is not set, so the watchdog API is off`);
    else log.warn(`${route} refused: ${refusal.body}`, { status: refusal.status });
    return c.text(refusal.body, refusal.status);
  };

  const watchdogRoute = <T>(path: string, parse: (text: string) => Parsed<T>, act: (body: T) => MaybePromise<void>) =>
    app.post(path, async (c) => {
      const route = `POST ${path}`;
      const refused = refuse(c, route);
      if (refused) return refused;
      const body = parse(await c.req.text());
      if (!body.ok) {
        log.warn(`${route} refused: bad body`, { error: body.error });
        return c.text('BadRequest', 400);
      }
      await act(body.value);
      return c.text('Success', 200);
    });
  watchdogRoute('/shutdown', parseShutdownBody, (body) => opts.onShutdown(body));
  watchdogRoute('/update', parseUpdateBody, (body) => opts.onUpdate(body));

  app.notFound((c) => c.text('Not Found', 404));
  app.onError((err, c) => {
    log.error(`${c.req.method} ${c.req.path} failed`, { error: err });
    return c.text('InternalServerError', 500);
  });
  return app;
}
