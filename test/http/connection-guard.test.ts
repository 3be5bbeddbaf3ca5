/**
 * The connection guard (src/http/connection-guard.ts) on a real node:http server with the check-in route, and
 * real sockets from 127.0.0.1 (and 127.0.0.2 for a second source): idle connections hold the cap, check-ins still
 * get through, connections that carried one keep their place, and slow headers are cut.
 */
import { connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import {
  type ConnectionGuard,
  connectionLimits,
  createConnectionGuard,
  descriptorLimit,
} from '../../src/http/connection-guard.ts';
import { pingRoutes } from '../../src/http/control-routes.ts';
import { type HttpServer, startHttpServer } from '../../src/http/server.ts';
import { waitFor } from '../_support/env.ts';
import { recordingLogger } from '../_support/recording-logger.ts';
import { basic, memoryInstance, memoryRegistry } from './_support/app.ts';

const SECRET = 'secret';
const CHECKIN = `POST /server_api/alpha/ping HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic('alpha', SECRET)}\r\nContent-Length: 0\r\n\r\n`;

interface Client {
  socket: Socket;
  closed: boolean;
  received: string;
}

/** A raw connection from `from` (127.0.0.1 by default), connected. */
function open(port: number, from = '127.0.0.1'): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    const c: Client = { socket, closed: false, received: '' };
    socket.on('data', (d: Buffer) => (c.received += d.toString()));
    socket.on('close', () => (c.closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(c));
    socket.once('error', reject);
  });
}

/** Sends a check-in on the connection and waits for the status line of its answer. */
async function checkin(c: Client): Promise<string> {
  const before = c.received.length;
  c.socket.write(CHECKIN);
  return waitFor(
    'the check-in answer',
    () => (c.closed && c.received.length === before ? 'closed' : /HTTP\/1\.1 \d+/.exec(c.received.slice(before))?.[0]),
    10_000,
  );
}

interface Ctx {
  server?: HttpServer;
  guard?: ConnectionGuard;
  clients: Client[];
}

const test = suite<Ctx>('http connection guard', { clients: [] });
test.after.each(async (ctx) => {
  for (const c of ctx.clients) c.socket.destroy();
  ctx.clients = [];
  await ctx.server?.close();
});

async function serve(ctx: Ctx, maxConnections: number, maxPerSource: number, headersTimeoutMs = 10_000) {
  const alpha = memoryInstance('alpha', { secret: SECRET });
  const guard = createConnectionGuard({ maxConnections, maxPerSource });
  // The check-in route, its connections trusted as the daemon does (src/daemon/run.ts); beside it, an app that
  // reads every body before it answers, as an upload route does.
  const app = new Hono();
  const deps = { registry: memoryRegistry(alpha), bus: createBus(), log: recordingLogger(), version: 'test' };
  app.route('/server_api', pingRoutes({ ...deps, trustCheckin: (socket) => guard.trust(socket) }));
  app.post('*', async (c) => c.text(`read ${(await c.req.text()).length} bytes`));
  // A request cut by an eviction ends its body read with "aborted": expected here, not worth a stack on stderr.
  app.onError((_err, c) => c.text('aborted', 500));
  const server = await startHttpServer(app, {
    port: 0,
    guard,
    timeouts: { headersTimeoutMs, requestTimeoutMs: headersTimeoutMs * 2, keepAliveTimeoutMs: 60_000 },
  });
  ctx.server = server;
  ctx.guard = guard;
  return { port: server.port, guard, alpha };
}

const track = async (ctx: Ctx, p: Promise<Client>) => {
  const c = await p;
  ctx.clients.push(c);
  return c;
};

test('guard :: with the cap held by idle connections, every check-in is answered and the oldest idle ones go', async (ctx) => {
  const { port, guard, alpha } = await serve(ctx, 20, 100);
  const idle: Client[] = [];
  for (let i = 0; i < 20; i++) idle.push(await track(ctx, open(port)));
  await waitFor('20 held', () => guard.counts().open === 20 || undefined, 10_000);
  for (let i = 0; i < 10; i++) {
    const c = await track(ctx, open(port));
    assert.is(await checkin(c), 'HTTP/1.1 200', `check-in ${i + 1}`);
  }
  assert.is(alpha.calls.filter((c) => c === 'checkin').length, 10);
  await waitFor('the evicted ones closed', () => idle.slice(0, 10).every((c) => c.closed) || undefined, 10_000);
  assert.ok(
    idle.slice(10).every((c) => !c.closed),
    'only the oldest idle connections were evicted',
  );
  const counts = guard.counts();
  assert.equal(counts.evicted, { total: 10, source: 0 });
  assert.equal(counts.refused, { total: 0, source: 0 });
  assert.ok(counts.open <= 20, `open ${counts.open}`);
});

test('guard :: a connection that carried a check-in is never evicted; with none evictable a newcomer gets 503', async (ctx) => {
  const { port, guard } = await serve(ctx, 3, 3);
  const servers: Client[] = [];
  for (let i = 0; i < 3; i++) {
    const c = await track(ctx, open(port));
    assert.is(await checkin(c), 'HTTP/1.1 200');
    servers.push(c);
  }
  const stranger = await track(ctx, open(port));
  await waitFor('the refusal', () => stranger.closed || undefined, 10_000);
  assert.match(stranger.received, /^HTTP\/1\.1 503 /);
  assert.equal(guard.counts().refused, { total: 0, source: 1 });
  for (const c of servers) assert.is(await checkin(c), 'HTTP/1.1 200', 'the trusted connections still serve');
  assert.equal(guard.counts().evicted, { total: 0, source: 0 });
});

test('guard :: the per-source cap evicts within its source and leaves other sources alone', async (ctx) => {
  const { port, guard } = await serve(ctx, 50, 5);
  const other: Client[] = [];
  for (let i = 0; i < 3; i++) other.push(await track(ctx, open(port, '127.0.0.1')));
  const flood: Client[] = [];
  for (let i = 0; i < 8; i++) flood.push(await track(ctx, open(port, '127.0.0.2')));
  await waitFor('3 evicted', () => flood.slice(0, 3).every((c) => c.closed) || undefined, 10_000);
  assert.ok(
    flood.slice(3).every((c) => !c.closed),
    'the newest five of the source stay',
  );
  assert.ok(
    other.every((c) => !c.closed),
    'another source keeps its connections',
  );
  assert.equal(guard.counts().evicted, { total: 0, source: 3 });
  const server = await track(ctx, open(port, '127.0.0.2'));
  assert.is(await checkin(server), 'HTTP/1.1 200', 'a check-in from the flooding address still gets through');
});

test('guard :: requests whose body never ends hold no slot against a check-in, and idle ones go first', async (ctx) => {
  const { port, guard } = await serve(ctx, 6, 6);
  const slow: Client[] = [];
  for (let i = 0; i < 4; i++) {
    const c = await track(ctx, open(port));
    // Headers complete, body promised and never sent: the request stays in flight.
    c.socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n');
    slow.push(c);
  }
  const idle = [await track(ctx, open(port)), await track(ctx, open(port))];
  await waitFor('6 held', () => guard.counts().open === 6 || undefined, 10_000);
  const a = await track(ctx, open(port));
  assert.is(await checkin(a), 'HTTP/1.1 200');
  const b = await track(ctx, open(port));
  assert.is(await checkin(b), 'HTTP/1.1 200');
  await waitFor('the idle ones went first', () => idle.every((c) => c.closed) || undefined, 10_000);
  assert.ok(
    slow.every((c) => !c.closed),
    'no request in flight was cut while idle connections could go',
  );
  const c = await track(ctx, open(port));
  assert.is(await checkin(c), 'HTTP/1.1 200', 'then the oldest request in flight gives way');
  await waitFor('the oldest slow one cut', () => slow[0]?.closed || undefined, 10_000);
  assert.equal(guard.counts().refused, { total: 0, source: 0 });
});

test('guard :: a keep-alive connection a client has used outlasts newer ones that never sent a request', async (ctx) => {
  const { port, guard } = await serve(ctx, 4, 4);
  // The CLI's connection: one answered request, then idle between requests (not a check-in, so not trusted).
  const used = await track(ctx, open(port));
  used.socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
  await waitFor('its answer', () => /HTTP\/1\.1 200/.test(used.received) || undefined, 10_000);
  const silent: Client[] = [];
  for (let i = 0; i < 3; i++) silent.push(await track(ctx, open(port)));
  await waitFor('4 held', () => guard.counts().open === 4 || undefined, 10_000);
  for (let i = 0; i < 3; i++) await track(ctx, open(port));
  await waitFor('the silent ones evicted', () => silent.every((c) => c.closed) || undefined, 10_000);
  assert.not.ok(used.closed, 'the used keep-alive connection kept its place');
  const next = await track(ctx, open(port));
  await waitFor(
    'then one of the newcomers, never the used one',
    () => guard.counts().evicted.source === 4 || undefined,
    10_000,
  );
  assert.not.ok(used.closed);
  assert.not.ok(next.closed);
});

test('guard :: with one connection per source, each newcomer of that source replaces the last', async (ctx) => {
  const { port, guard } = await serve(ctx, 10, 1);
  const first = await track(ctx, open(port, '127.0.0.2'));
  const second = await track(ctx, open(port, '127.0.0.2'));
  await waitFor('the first replaced', () => first.closed || undefined, 10_000);
  const third = await track(ctx, open(port, '127.0.0.2'));
  await waitFor('the second replaced', () => second.closed || undefined, 10_000);
  assert.not.ok(third.closed);
  assert.equal(guard.counts().evicted, { total: 0, source: 2 });
});

test('guard :: a client sending nothing, or a header byte now and then, is answered 408 and closed', async (ctx) => {
  const { port, guard } = await serve(ctx, 10, 10, 300);
  const silent = await track(ctx, open(port));
  const trickle = await track(ctx, open(port));
  trickle.socket.write('GET /health HTTP/1.1\r\n');
  const timer = setInterval(() => trickle.socket.writable && trickle.socket.write('X: y\r\n'), 100);
  try {
    await waitFor('both cut', () => (silent.closed && trickle.closed) || undefined, 10_000);
  } finally {
    clearInterval(timer);
  }
  assert.match(silent.received, /^HTTP\/1\.1 408 /);
  assert.match(trickle.received, /^HTTP\/1\.1 408 /);
  await waitFor('none held', () => guard.counts().open === 0 || undefined, 10_000);
});

test('limits :: the caps derive from the descriptor limit, leaving descriptors for launches and logs', () => {
  assert.is(
    descriptorLimit('Limit  Soft Limit\nMax open files            1024                 524288               files\n'),
    1024,
  );
  assert.is(descriptorLimit('Max processes 10 10\n'), null);
  const defaults = { HeadersTimeoutSeconds: 10, RequestTimeoutSeconds: 60, KeepAliveTimeoutSeconds: 20 };
  assert.equal(connectionLimits(defaults, 1024), {
    maxConnections: 512,
    maxPerSource: 256,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    keepAliveTimeoutMs: 20_000,
  });
  assert.is(connectionLimits(defaults, 100).maxConnections, 36, 'at least 64 stay free');
  assert.is(connectionLimits(defaults, 20).maxConnections, 8, 'never below 8');
  assert.is(connectionLimits(defaults, 1_048_576).maxConnections, 4096, 'at most 4096');
  assert.is(connectionLimits(defaults, null).maxConnections, 512, 'an unknown limit is taken as 1024');
  const set = connectionLimits({ ...defaults, MaxConnections: 40, MaxConnectionsPerSource: 7 }, 1024);
  assert.equal([set.maxConnections, set.maxPerSource], [40, 7]);
  const live = descriptorLimit();
  assert.ok(live === null || live > 0, 'this process has a readable limit, or none');
});

test.run();
