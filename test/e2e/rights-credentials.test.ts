/**
 * Each credential on the real daemon is good for its own purpose only: an instance's ApiToken on that instance's
 * routes, a key as a Bearer key, a password as a password, a session as the cookie, the Admin login on the
 * dashboard's routes (and the logs route), a proxy's user headers from a proxy in TrustedProxies; an expired key is
 * no key. Everything else is 401, or the ApiToken rule's own 403 for another instance's token.
 */
import * as assert from 'uvu/assert';
import { daemonSuite, type RunningDaemon } from '../_support/daemon.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { basicAuth } from './_support/accounts.ts';
import {
  ADMIN,
  CASE_KEYS,
  caseUsers,
  logIn,
  PASSWORD,
  rawRequest,
  replaceUsers,
  rightsConfig,
  rightsReady,
  SSO,
  TOKEN_OF,
} from './_support/rights.ts';

const test = daemonSuite('e2e :: each credential for its own purpose', {
  config: () => rightsConfig(),
  before: async (ctx) => {
    await rightsReady(ctx.daemon!);
    assert.ok(await replaceUsers(ctx.daemon!, caseUsers(await fastHash(PASSWORD))), 'the cases’ users file');
  },
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const basic = (user: string, password: string) => ({ authorization: basicAuth(user, password) });
const cookie = (id: string) => ({ cookie: `watchdog_session=${id}` });

/** A route of each kind on instance `key`: an instance route, a control one, the dashboard's, and the logs route. */
const routes = (key: string): Array<[string, string]> => [
  ['GET', `/instances/${key}/status`],
  ['POST', `/instances/${key}/hold?minutes=0`],
  ['GET', `/api/instances/${key}/log?n=1`],
  ['POST', `/api/instances/${key}/hold?minutes=0`],
  ['GET', `/instances/${key}/logs?lines=1`],
  ['GET', '/metrics'],
];

/** Every route of `routes(key)` answers `status` to `headers`, and never names a permission (nobody was known). */
async function refusedEverywhere(d: RunningDaemon, key: string, headers: Record<string, string>, why: string) {
  for (const [method, path] of routes(key)) {
    const res = await rawRequest(d, method, path, { ...headers, 'x-watchdog-dashboard': '1' });
    assert.is(res.status, 401, `${why}: ${method} ${path}: ${res.body.slice(0, 200)}`);
    assert.not.match(res.body, '"permission"', `${why}: ${method} ${path}`);
  }
}

test('credentials :: an instance’s ApiToken works on its own instance’s routes and nowhere else', async ({
  daemon,
}) => {
  const d = daemon!;
  const own = basic('a', TOKEN_OF.a);
  assert.is((await rawRequest(d, 'GET', '/instances/a/status', own)).status, 200, 'its own instance');
  assert.is((await rawRequest(d, 'POST', '/instances/a/hold?minutes=0', own)).status, 400, 'let in, then 400');
  for (const [method, path] of [
    ['GET', '/instances/b/status'],
    ['POST', '/instances/b/hold?minutes=0'],
    ['POST', '/instances/c/restart?when=Never'],
  ] as const) {
    const res = await rawRequest(d, method, path, own);
    assert.equal([res.status, JSON.parse(res.body)], [403, { error: 'user does not match the instance key' }], path);
  }
  // Named as b's user, a's token is b's wrong token.
  assert.is((await rawRequest(d, 'GET', '/instances/b/status', basic('b', TOKEN_OF.a))).status, 401);
  // Not a dashboard credential, nor a key, nor another user's password.
  for (const [method, path] of routes('a')
    .slice(2, 4)
    .concat([['GET', '/metrics']])) {
    const res = await rawRequest(d, method, path, { ...own, 'x-watchdog-dashboard': '1' });
    assert.is(res.status, 401, `${method} ${path}`);
  }
  await refusedEverywhere(d, 'a', bearer(TOKEN_OF.a), 'the ApiToken as a Bearer key');
  await refusedEverywhere(d, 'a', basic('boss', TOKEN_OF.a), 'the ApiToken as a user’s password');
});

test('credentials :: an API key is no password, a session id no key, a key no session', async ({ daemon }) => {
  const d = daemon!;
  const key = CASE_KEYS.live;
  assert.is((await rawRequest(d, 'GET', '/api/instances/a/log?n=1', bearer(key.key))).status, 200, 'as a key');
  await refusedEverywhere(d, 'a', basic('boss', key.key), 'the key as its user’s password');
  await refusedEverywhere(d, 'a', basic(key.id, key.key), 'the key as a password of its id');
  assert.is((await rawRequest(d, 'GET', '/instances/a/status', basic('a', key.key))).status, 401, 'as an ApiToken');
  await refusedEverywhere(d, 'a', cookie(key.key), 'the key as a session cookie');

  const session = await logIn(d, 'boss', PASSWORD);
  assert.is((await rawRequest(d, 'GET', '/api/instances/a/log?n=1', cookie(session))).status, 200, 'as the cookie');
  await refusedEverywhere(d, 'a', bearer(session), 'the session id as a Bearer key');
  await refusedEverywhere(d, 'a', basic('boss', session), 'the session id as a password');
  assert.is((await rawRequest(d, 'GET', '/instances/a/status', basic('a', session))).status, 401, 'as an ApiToken');
});

test('credentials :: the Admin password is no ApiToken, and the Admin login no instance-route credential', async ({
  daemon,
}) => {
  const d = daemon!;
  const admin = basic(ADMIN.user, ADMIN.password);
  for (const [method, path] of [
    ['GET', '/api/instances/a/log?n=1'],
    ['GET', '/instances/a/logs?lines=1'],
    ['GET', '/metrics'],
  ] as const)
    assert.is((await rawRequest(d, method, path, admin)).status, 200, `the Admin login on ${path}`);
  for (const key of ['a', 'b'])
    for (const [method, path] of routes(key).slice(0, 2)) {
      const asToken = await rawRequest(d, method, path, basic(key, ADMIN.password));
      assert.is(asToken.status, 401, `the Admin password as ${key}'s ApiToken: ${method} ${path}`);
      const asLogin = await rawRequest(d, method, path, admin);
      assert.is(asLogin.status, 401, `the Admin login on ${method} ${path}`);
    }
});

test('credentials :: an expired key is no key (401) on every route; the same user’s key in force gets in', async ({
  daemon,
}) => {
  const d = daemon!;
  await refusedEverywhere(d, 'a', bearer(CASE_KEYS.expired.key), 'an expired key');
  for (const [method, path] of routes('a')) {
    const res = await rawRequest(d, method, path, { ...bearer(CASE_KEYS.live.key), 'x-watchdog-dashboard': '1' });
    assert.ok(res.status !== 401 && res.status !== 403, `the live key on ${method} ${path}: ${res.status}`);
  }
});

test('credentials :: a proxy’s user headers count from a peer in TrustedProxies only', async ({ daemon }) => {
  const d = daemon!;
  const vouched = { [SSO.user]: 'boss', [SSO.groups]: 'g0', 'x-watchdog-dashboard': '1' };
  const dashboard: Array<[string, string]> = [
    ['GET', '/api/me'],
    ['GET', '/api/instances'],
    ['POST', '/api/instances/a/hold?minutes=0'],
    ['GET', '/api/instances/a/log?n=1'],
    ['GET', '/metrics'],
  ];
  // From 127.0.0.1, the trusted proxy: boss, an admin, is let in everywhere (the hold then refused for its minutes).
  for (const [method, path] of dashboard) {
    const res = await rawRequest(d, method, path, vouched);
    assert.ok(res.status === 200 || res.status === 400, `${method} ${path} from the proxy: ${res.status} ${res.body}`);
  }
  // From 127.0.0.2, on this machine but no proxy in TrustedProxies: the same headers are no one's.
  for (const [method, path] of [...dashboard, ...routes('a').slice(0, 2)]) {
    const res = await rawRequest(d, method, path, vouched, undefined, '127.0.0.2');
    assert.is(res.status, 401, `${method} ${path} from 127.0.0.2: ${res.body}`);
    assert.not.match(res.body, '"permission"');
  }
  // Nor does a forwarded-for header make it a proxy's request.
  const forwarded = { ...vouched, 'x-forwarded-for': '127.0.0.1' };
  assert.is((await rawRequest(d, 'GET', '/api/me', forwarded, undefined, '127.0.0.2')).status, 401);
});

test.run();
