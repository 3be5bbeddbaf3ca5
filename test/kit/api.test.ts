import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGameApi, type ShutdownRequest, type UpdateRequest } from '../../src/kit/api.ts';
import { sameSecret } from '../../src/kit/api-watchdog.ts';
import type { Info } from '../../src/kit/schemas.ts';
import { validateInfo, validateStatus } from '../../src/kit/schemas.ts';
import type { Logger } from '../../src/log.ts';

interface Ctx {
  token: string | undefined;
  shutdowns: ShutdownRequest[];
  updates: UpdateRequest[];
  logged: string[];
  app: ReturnType<typeof createGameApi>;
}

const INFO: Info = {
  connect_addrees: 'udp://play.example:1212/',
  auth: { mode: 'Required', public_key: 'k' },
  build: null,
  links: [],
};

function logger(into: string[]): Logger {
  const l: Logger = {
    debug: (m) => into.push(`debug ${m}`),
    info: (m) => into.push(`info ${m}`),
    warn: (m, f) => into.push(`warn ${m} ${JSON.stringify(f ?? {})}`),
    error: (m) => into.push(`error ${m}`),
    child: () => l,
  };
  return l;
}

function fresh(ctx: Ctx): void {
  ctx.token = 'secret-token';
  ctx.shutdowns = [];
  ctx.updates = [];
  ctx.logged = [];
  ctx.app = createGameApi({
    status: () => ({ name: '[EN] Test', players: 2, soft_max_players: 10, round_id: 4 }),
    info: () => INFO,
    watchdogToken: () => ctx.token,
    onShutdown: (r) => void ctx.shutdowns.push(r),
    onUpdate: (r) => void ctx.updates.push(r),
    log: logger(ctx.logged),
  });
}

const pub = suite<Ctx>('api :: public endpoints', {} as Ctx);
pub.before.each(fresh);

pub('api :: GET /status: JSON with CORS, tags defaulted, game fields kept, passes the schema', async ({ app }) => {
  const res = await app.request('/status');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.is(res.headers.get('access-control-allow-origin'), '*');
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body, { name: '[EN] Test', players: 2, soft_max_players: 10, round_id: 4, tags: [] });
  assert.equal(validateStatus(body).problems, []);
});

pub('api :: GET /info: both connect-address spellings, CORS, passes the schema', async ({ app }) => {
  const res = await app.request('/info');
  assert.is(res.status, 200);
  assert.is(res.headers.get('access-control-allow-origin'), '*');
  const body = (await res.json()) as Record<string, unknown>;
  assert.is(body.connect_address, 'udp://play.example:1212/');
  assert.is(body.connect_addrees, 'udp://play.example:1212/');
  assert.equal(validateInfo(body).problems, []);
});

for (const path of ['/status', '/info']) {
  pub(`api :: HEAD ${path}: headers only`, async ({ app }) => {
    const res = await app.request(path, { method: 'HEAD' });
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.is(res.headers.get('access-control-allow-origin'), '*');
    assert.is(await res.text(), '');
  });
}

const NOT_FOUND: Array<[string, string]> = [
  ['POST', '/status'],
  ['PUT', '/info'],
  ['GET', '/nope'],
  ['GET', '/update'],
  ['POST', '/update/'],
  ['GET', '/Status'],
];
for (const [method, path] of NOT_FOUND) {
  pub(`api :: ${method} ${path} → 404 Not Found`, async ({ app }) => {
    const res = await app.request(path, { method });
    assert.is(res.status, 404);
    assert.is(await res.text(), 'Not Found');
  });
}

pub('api :: games can add routes to the app', async ({ app }) => {
  app.get('/players', (c) => c.json(['a']));
  assert.equal(await (await app.request('/players')).json(), ['a']);
});

pub('api :: a failing status callback → 500 InternalServerError, logged', async () => {
  const logged: string[] = [];
  const app = createGameApi({
    status: () => {
      throw new Error('boom');
    },
    info: () => INFO,
    watchdogToken: () => undefined,
    onShutdown: () => {},
    onUpdate: () => {},
    log: logger(logged),
  });
  const res = await app.request('/status');
  assert.is(res.status, 500);
  assert.is(await res.text(), 'InternalServerError');
  assert.ok(logged.some((l) => l.startsWith('error GET /status failed')));
});
pub.run();

// ---
const guard = suite<Ctx>('api :: WatchdogToken guard', {} as Ctx);
guard.before.each(fresh);

for (const route of ['/shutdown', '/update']) {
  guard(`api :: ${route}: token unset → 404 and the callback is not called`, async (ctx) => {
    ctx.token = '';
    const res = await ctx.app.request(route, { method: 'POST', headers: { WatchdogToken: 'x' }, body: '{}' });
    assert.is(res.status, 404);
    assert.is(await res.text(), 'Not Found');
    assert.is(ctx.shutdowns.length + ctx.updates.length, 0);
  });
  guard(`api :: ${route}: header missing → 400 Expected WatchdogToken header`, async (ctx) => {
    const res = await ctx.app.request(route, { method: 'POST', body: '{}' });
    assert.is(res.status, 400);
    assert.is(await res.text(), 'Expected WatchdogToken header');
    assert.is(ctx.shutdowns.length + ctx.updates.length, 0);
  });
  guard(`api :: ${route}: wrong token → 401 Unauthorized, token never logged`, async (ctx) => {
    const res = await ctx.app.request(route, {
      method: 'POST',
      headers: { WatchdogToken: 'secret-tokeN' },
      body: '{}',
    });
    assert.is(res.status, 401);
    assert.is(await res.text(), 'Unauthorized');
    assert.is(ctx.shutdowns.length + ctx.updates.length, 0);
    assert.not.ok(ctx.logged.join('\n').includes('secret-tok'), 'no token in logs');
  });
  guard(`api :: ${route}: header name is case-insensitive`, async (ctx) => {
    const res = await ctx.app.request(route, {
      method: 'POST',
      headers: { watchdogtoken: 'secret-token' },
      body: '{}',
    });
    assert.is(res.status, 200);
  });
}

guard('api :: sameSecret compares exactly', () => {
  assert.ok(sameSecret('abc', 'abc'));
  assert.not.ok(sameSecret('abc', 'abcd'));
  assert.not.ok(sameSecret('', 'a'));
  assert.ok(sameSecret('', ''));
  assert.not.ok(sameSecret('tok', 'tok '));
  assert.not.ok(sameSecret('x'.repeat(10_000), 'y'));
  assert.not.ok(sameSecret('é', 'e\u0301'), 'no Unicode normalisation');
});
guard.run();

// ---
const shutdown = suite<Ctx>('api :: POST /shutdown', {} as Ctx);
shutdown.before.each(fresh);

const post = (ctx: Ctx, route: string, body: string | undefined, contentType = 'text/plain; charset=utf-8') =>
  ctx.app.request(route, {
    method: 'POST',
    headers: { WatchdogToken: 'secret-token', 'Content-Type': contentType },
    body,
  });

shutdown("api :: the watchdog's body (text/plain JSON) → 200 Success with the reason", async (ctx) => {
  const res = await post(ctx, '/shutdown', '{"Reason":"Watchdog shutting down."}');
  assert.is(res.status, 200);
  assert.is(await res.text(), 'Success');
  assert.equal(ctx.shutdowns, [{ reason: 'Watchdog shutting down.' }]);
});

shutdown('api :: {} → 200 with no reason; lower-case reason is ignored', async (ctx) => {
  assert.is((await post(ctx, '/shutdown', '{}', 'application/json')).status, 200);
  assert.is((await post(ctx, '/shutdown', '{"reason":"x"}')).status, 200);
  assert.equal(ctx.shutdowns, [{ reason: null }, { reason: null }]);
});

const BAD_SHUTDOWN: Array<[string, string | undefined]> = [
  ['no body', undefined],
  ['malformed JSON', '{"Reason":'],
  ['null', 'null'],
  ['an array', '[]'],
  ['a string', '"bye"'],
  ['a numeric Reason', '{"Reason":5}'],
];
for (const [what, body] of BAD_SHUTDOWN) {
  shutdown(`api :: ${what} → 400 BadRequest, nothing happens`, async (ctx) => {
    const res = await post(ctx, '/shutdown', body);
    assert.is(res.status, 400);
    assert.is(await res.text(), 'BadRequest');
    assert.equal(ctx.shutdowns, []);
  });
}
shutdown.run();

// ---
const update = suite<Ctx>('api :: POST /update', {} as Ctx);
update.before.each(fresh);

const UPDATES: Array<[string, string | undefined, UpdateRequest]> = [
  ['no body → UpdateAvailable', undefined, { reason: 'UpdateAvailable', message: null }],
  ['empty body → UpdateAvailable', '', { reason: 'UpdateAvailable', message: null }],
  [
    'Maintenance with a message',
    '{"Reason":"Maintenance","Message":"back at 5"}',
    { reason: 'Maintenance', message: 'back at 5' },
  ],
  ['UpdateAvailable', '{"Reason":"UpdateAvailable"}', { reason: 'UpdateAvailable', message: null }],
  ['Other', '{"Reason":"Other"}', { reason: 'Other', message: null }],
  ['unknown Reason → Other', '{"Reason":"Because"}', { reason: 'Other', message: null }],
  ['wrong-case Reason value → Other', '{"Reason":"maintenance"}', { reason: 'Other', message: null }],
  ['numeric name "2" → Maintenance', '{"Reason":"2"}', { reason: 'Maintenance', message: null }],
  ['{} → Other', '{}', { reason: 'Other', message: null }],
];
for (const [what, body, expected] of UPDATES) {
  update(`api :: ${what}`, async (ctx) => {
    const res = await post(ctx, '/update', body, 'application/json');
    assert.is(res.status, 200);
    assert.is(await res.text(), 'Success');
    assert.equal(ctx.updates, [expected]);
  });
}

const BAD_UPDATE: Array<[string, string]> = [
  ['malformed JSON', '{nope'],
  ['null', 'null'],
  ['a number', '3'],
  ['a numeric Message', '{"Message":3}'],
];
for (const [what, body] of BAD_UPDATE) {
  update(`api :: ${what} → 400 BadRequest`, async (ctx) => {
    const res = await post(ctx, '/update', body, 'application/json');
    assert.is(res.status, 400);
    assert.is(await res.text(), 'BadRequest');
    assert.equal(ctx.updates, []);
  });
}
update.run();
