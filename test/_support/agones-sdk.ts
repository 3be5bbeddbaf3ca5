import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { freePort } from './env.ts';

/**
 * A strict loopback stand-in for the Agones SDK server's REST gateway (the sidecar of an Agones pod): the routes of
 * Agones' sdk.swagger.json and the beta Counter routes, and nothing else. Unknown paths → 404, a known path with
 * another method → 405, a write whose body is not a JSON object → 400, an int64 field that is not a string of digits
 * → 400. Every request is recorded with its time, refused ones too.
 */

export interface SdkCall {
  method: string;
  path: string;
  body: unknown;
  status: number;
  /** `Date.now()` when the request arrived. */
  at: number;
}

export interface FakeGameServer {
  object_meta: { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  status: {
    state: string;
    address: string;
    ports: Array<{ name: string; port: number }>;
    counters: Record<string, { count: string; capacity: string }>;
  };
}

export interface FakeAgonesSdkOptions {
  /** Listen on this port (reserve one with `freePort()` to start late on a known port); default a free one. */
  port?: number;
  /** Start listening this long after the call (the SDK server starting after the game server). */
  delayMs?: number;
  /** false: answer every Counter route 404, as an SDK server without the CountsAndLists feature. */
  counters?: boolean;
  /** Capacity of the `players` Counter (default 100). */
  capacity?: number;
}

export interface FakeAgonesSdk {
  port: number;
  url: string;
  /** `{ AGONES_SDK_HTTP_PORT }` for a game server's environment. */
  env: Record<string, string>;
  /** Resolves once the server listens (at once, or after `delayMs`). */
  listening: Promise<void>;
  calls: SdkCall[];
  /** The recorded calls of one route, answered or not. */
  callsTo(method: string, path: string): SdkCall[];
  gameServer(): FakeGameServer;
  /** Moves the GameServer to `state` (as Agones would) and tells every watcher. */
  setState(state: string): void;
  close(): Promise<void>;
}

const INT64 = /^-?\d+$/;
const LABEL_PREFIX = 'agones.dev/sdk-';

type Handler = (body: Record<string, unknown>, match: RegExpExecArray) => { status: number; body: unknown };

const fail = (status: number, code: number, message: string) => ({ status, body: { code, message, details: [] } });
const ok = (body: unknown = {}) => ({ status: 200, body });

export async function startAgonesSdk(opts: FakeAgonesSdkOptions = {}): Promise<FakeAgonesSdk> {
  const port = opts.port ?? (opts.delayMs ? await freePort() : 0);
  const counters = opts.counters ?? true;
  const gs: FakeGameServer = {
    object_meta: { name: 'fake-gs', namespace: 'default', labels: {}, annotations: {} },
    status: {
      state: 'Scheduled',
      address: '127.0.0.1',
      ports: [{ name: 'default', port: 7777 }],
      counters: counters ? { players: { count: '0', capacity: String(opts.capacity ?? 100) } } : {},
    },
  };
  const calls: SdkCall[] = [];
  const watchers = new Set<ServerResponse>();
  const changed = () => {
    const line = JSON.stringify({ result: gs }) + '\n';
    for (const w of watchers) w.write(line);
  };
  const setState = (state: string) => {
    gs.status.state = state;
    changed();
  };
  const moveTo = (state: string) => () => {
    if (gs.status.state !== 'Shutdown') setState(state);
    return ok();
  };
  const keyValue =
    (into: Record<string, string>): Handler =>
    (b) => {
      if (typeof b.key !== 'string' || b.key === '' || typeof b.value !== 'string')
        return fail(400, 3, 'key and value must be strings');
      into[LABEL_PREFIX + b.key] = b.value;
      changed();
      return ok();
    };
  const counter: Handler = (b, m) => {
    const found = gs.status.counters[decodeURIComponent(m[1] ?? '')];
    if (!found) return fail(404, 5, `counter not found: ${m[1]}`);
    if (b.count === undefined && b.capacity === undefined && b.countDiff === undefined)
      return ok({ name: m[1], ...found });
    for (const k of ['count', 'capacity', 'countDiff']) {
      if (b[k] !== undefined && (typeof b[k] !== 'string' || !INT64.test(b[k])))
        return fail(400, 3, `${k} must be an int64 written as a JSON string`);
    }
    const capacity = b.capacity === undefined ? Number(found.capacity) : Number(b.capacity);
    const count = (b.count === undefined ? Number(found.count) : Number(b.count)) + Number(b.countDiff ?? 0);
    if (count < 0 || count > capacity) return fail(400, 11, `count ${count} out of range [0,${capacity}]`);
    found.count = String(count);
    found.capacity = String(capacity);
    changed();
    return ok({ name: m[1], ...found });
  };

  const routes: Array<{ path: RegExp; methods: Record<string, Handler> }> = [
    { path: /^\/ready$/, methods: { POST: moveTo('Ready') } },
    { path: /^\/health$/, methods: { POST: () => ok() } },
    { path: /^\/allocate$/, methods: { POST: moveTo('Allocated') } },
    { path: /^\/shutdown$/, methods: { POST: moveTo('Shutdown') } },
    {
      path: /^\/reserve$/,
      methods: {
        POST: (b) =>
          b.seconds !== undefined && (typeof b.seconds !== 'string' || !INT64.test(b.seconds))
            ? fail(400, 3, 'seconds must be an int64 written as a JSON string')
            : moveTo('Reserved')(),
      },
    },
    { path: /^\/metadata\/label$/, methods: { PUT: keyValue(gs.object_meta.labels) } },
    { path: /^\/metadata\/annotation$/, methods: { PUT: keyValue(gs.object_meta.annotations) } },
    { path: /^\/gameserver$/, methods: { GET: () => ok(gs) } },
    { path: /^\/v1beta1\/counters\/([^/]+)$/, methods: counters ? { GET: counter, PATCH: counter } : {} },
  ];

  const answer = (req: IncomingMessage, res: ServerResponse, call: SdkCall, text: string) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = routes.find((r) => r.path.test(path));
    const send = (r: { status: number; body: unknown }) => {
      call.status = r.status;
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.body));
    };
    if (path === '/watch/gameserver') {
      if (req.method !== 'GET') return send(fail(405, 12, 'Method Not Allowed'));
      call.status = 200;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(JSON.stringify({ result: gs }) + '\n');
      watchers.add(res);
      res.on('close', () => watchers.delete(res));
      return;
    }
    const handler = route?.methods[req.method ?? ''];
    if (!route || Object.keys(route.methods).length === 0) return send(fail(404, 5, 'Not Found'));
    if (!handler) {
      res.setHeader('allow', Object.keys(route.methods).join(', '));
      return send(fail(405, 12, 'Method Not Allowed'));
    }
    let body: unknown = {};
    if (req.method !== 'GET') {
      try {
        body = JSON.parse(text);
      } catch {
        return send(fail(400, 3, 'the body is not JSON'));
      }
      call.body = body;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        return send(fail(400, 3, 'the body must be a JSON object'));
    }
    send(handler(body as Record<string, unknown>, route.path.exec(path) as RegExpExecArray));
  };

  const server = createServer((req, res) => {
    const call: SdkCall = { method: req.method ?? '', path: req.url ?? '', body: undefined, status: 0, at: Date.now() };
    calls.push(call);
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => answer(req, res, call, text));
  });
  let late: NodeJS.Timeout | undefined;
  const listening = new Promise<void>((resolve, reject) => {
    const go = () => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    };
    if (opts.delayMs) late = setTimeout(go, opts.delayMs);
    else go();
  });
  if (!opts.delayMs) await listening;
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    env: { AGONES_SDK_HTTP_PORT: String(bound) },
    listening,
    calls,
    callsTo: (method, path) => calls.filter((c) => c.method === method && c.path === path),
    gameServer: () => structuredClone(gs),
    setState,
    close: () =>
      new Promise((resolve) => {
        clearTimeout(late);
        for (const w of watchers) w.end();
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The health pings' pace so far: the mean gap (ms) from the second ping on, since the first goes out at start while
 * the process is busiest, and every gap. Timer and loopback jitter move single pings (more so on a loaded machine);
 * the pace and the longest gap do not, so tests assert on those.
 */
export function healthPace(fake: FakeAgonesSdk): { pace: number; gaps: number[] } {
  const pings = fake
    .callsTo('POST', '/health')
    .map((c) => c.at)
    .slice(1);
  const gaps = pings.slice(1).map((t, i) => t - (pings[i] ?? t));
  return { pace: ((pings.at(-1) ?? 0) - (pings[0] ?? 0)) / (pings.length - 1), gaps };
}
