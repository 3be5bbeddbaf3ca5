/** The accepted check-in answered on node:http before the Hono app (src/http/checkin-fast-path.ts). */
import { Hono } from 'hono';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkinFastPath } from '../../src/http/checkin-fast-path.ts';
import { firstOf } from '../../src/http/fast-path.ts';
import { healthFastPath } from '../../src/http/health.ts';
import { type HttpServer, startHttpServer, startHttpServers } from '../../src/http/server.ts';
import { authCases, basic, harness, type MemoryInstance, memoryInstance, memoryRegistry } from './_support/app.ts';

const SECRET = 'se:cr:et';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function answer(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
  return { status: res.status, headers, body: await res.text() };
}

interface Ctx {
  alpha: MemoryInstance;
  servers: HttpServer[];
}
const test = suite<Ctx>('checkin fast path', { alpha: memoryInstance('alpha'), servers: [] });
test.before.each((ctx) => {
  ctx.alpha = memoryInstance('alpha', { secret: SECRET });
  ctx.servers = [];
});
test.after.each(async (ctx) => {
  await Promise.all(ctx.servers.map((s) => s.close()));
});

test('checkin-fast-path :: an accepted check-in never reaches the app; everything else does', async (ctx) => {
  const registry = memoryRegistry(ctx.alpha);
  // An app that knows no route: whatever it answers, the fast path left to it.
  const empty = new Hono();
  empty.notFound((c) => c.text('app', 404));
  const server = await startHttpServer(empty, { port: 0, fastPath: checkinFastPath(registry) });
  ctx.servers.push(server);
  const ping = (path: string, init: RequestInit = {}) =>
    answer(`${server.url}${path}`, { method: 'POST', headers: { authorization: basic('alpha', SECRET) }, ...init });

  const ok = await ping('/server_api/alpha/ping');
  assert.is(ok.status, 200);
  assert.is(ok.body, '');
  assert.equal(ctx.alpha.calls, ['checkin']);

  const left = [
    await ping('/server_api/alpha/ping', { headers: { authorization: basic('alpha', 'stale') } }),
    await ping('/server_api/beta/ping', { headers: { authorization: basic('beta', SECRET) } }),
    await ping('/server_api/alpha/ping', { method: 'GET' }),
    await ping('/server_api/alpha/ping?x=1'),
    await ping('/server_api/%61lpha/ping'),
    await ping('/server_api/alpha/ping/'),
    await ping('/server_api//ping'),
  ];
  assert.equal(
    left.map((a) => [a.status, a.body]),
    left.map(() => [404, 'app']),
  );
  assert.equal(ctx.alpha.calls, ['checkin'], 'only the accepted check-in counted');
});

test('checkin-fast-path :: with the real app every answer is the one the app gives alone, headers included', async (ctx) => {
  const registry = memoryRegistry(ctx.alpha);
  const plain = await startHttpServer(harness(registry).app, { port: 0 });
  const fast = await startHttpServer(harness(registry).app, { port: 0, fastPath: checkinFastPath(registry) });
  ctx.servers.push(plain, fast);
  const cases: Array<[string, RequestInit]> = [
    ...authCases('alpha', SECRET).map((c): [string, RequestInit] => [
      `/server_api/${c.key}/ping`,
      { method: 'POST', headers: c.header === undefined ? {} : { authorization: c.header } },
    ]),
    ['/server_api/alpha/ping', { method: 'PUT', headers: { authorization: basic('alpha', SECRET) } }],
    [
      '/server_api/alpha/ping',
      { method: 'POST', headers: { authorization: basic('alpha', SECRET) }, body: '{"ignored":true}' },
    ],
  ];
  for (const [path, init] of cases) {
    const want = await answer(plain.url + path, init);
    const got = await answer(fast.url + path, init);
    assert.equal(got, want, `${init.method} ${path} ${JSON.stringify(init.headers)}`);
  }
  const accepted = ctx.alpha.calls.filter((c) => c === 'checkin').length;
  assert.ok(accepted >= 4, `accepted check-ins counted on both servers (${accepted})`);
});

test('checkin-fast-path :: GET and HEAD /health on the fast path answer as the app does, headers included; the rest goes to the app', async (ctx) => {
  const registry = memoryRegistry(ctx.alpha);
  const version = '9.9.9-test';
  const plain = await startHttpServer(harness(registry).app, { port: 0 });
  const fastPath = firstOf(checkinFastPath(registry), healthFastPath(registry, version));
  const fast = await startHttpServer(harness(registry).app, { port: 0, fastPath });
  // An app that knows no route shows what the fast path leaves to the app.
  const empty = new Hono();
  empty.notFound((c) => c.text('app', 404));
  const bare = await startHttpServer(empty, { port: 0, fastPath });
  ctx.servers.push(plain, fast, bare);
  for (const method of ['GET', 'HEAD']) {
    const want = await answer(`${plain.url}/health`, { method });
    const got = await answer(`${fast.url}/health`, { method });
    assert.equal(got, want, method);
    assert.equal((await answer(`${bare.url}/health`, { method })).status, 200, `${method}: from the fast path`);
  }
  const health = JSON.parse((await answer(`${fast.url}/health`, {})).body) as Record<string, unknown>;
  assert.equal(health.instances, { alpha: ctx.alpha.status().state });
  assert.is(health.version, version);
  for (const [path, method] of [
    ['/health', 'POST'],
    ['/health?x=1', 'GET'],
    ['/health/', 'GET'],
  ] as const)
    assert.equal((await answer(bare.url + path, { method })).body, 'app', `${method} ${path}`);
});

test('checkin-fast-path :: a lazy app is built at the first request the fast path leaves to it, once for every socket, again after a failure', async (ctx) => {
  const registry = memoryRegistry(ctx.alpha);
  let builds = 0;
  let fail = true;
  const app = async () => {
    builds++;
    if (fail) throw new Error('the app failed to build');
    const built = new Hono();
    built.get('/hello', (c) => c.text('built'));
    return built;
  };
  const fastPath = firstOf(checkinFastPath(registry), healthFastPath(registry, '1.0.0'));
  // localhost: 127.0.0.1 and, where there is IPv6, ::1; both sockets share one app.
  const http = await startHttpServers(app, [{ host: 'localhost', port: 0 }], { fastPath });
  ctx.servers.push({ url: '', port: 0, close: http.close });
  const urls = http.bound.map((b) => b.url);
  const first = urls[0] ?? '';
  for (let i = 0; i < 3; i++) {
    assert.is((await answer(`${first}/health`, {})).status, 200);
    const ping = await answer(`${first}/server_api/alpha/ping`, {
      method: 'POST',
      headers: { authorization: basic('alpha', SECRET) },
    });
    assert.is(ping.status, 200);
  }
  assert.is(builds, 0, 'check-ins and health probes build no app');

  assert.is((await answer(`${first}/hello`, {})).status, 500, 'a failed build answers 500');
  fail = false;
  for (const url of urls) assert.equal((await answer(`${url}/hello`, {})).body, 'built', url);
  assert.is(builds, 2, 'built again after the failure, then once for every socket');
});

test.run();
