/**
 * Dashboard login through OpenID Connect (`Users.Oidc`, README "Users and rights") on the real daemon, against a
 * real provider (oidc-provider) on 127.0.0.1: the whole browser flow, the groups claim mapped to rights by the users
 * file's `Groups:`, and the refusals (a state altered, a callback replayed, no user claim).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { daemonSuite, type RunningDaemon } from '../_support/daemon.ts';
import { freePort } from '../_support/env.ts';
import { CookieJar, signInAtProvider, startProvider, type TestProvider } from './_support/oidc-provider.ts';

const CLIENT = { id: 'watchdog', secret: 'client-secret-0123456789abcdef' };

/** Begins a login at the daemon as a browser: its jar gets the state cookie; the provider's URL is returned. */
async function begin(d: RunningDaemon, jar: CookieJar): Promise<string> {
  const res = await fetch(`${d.url}/login/oidc`, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(res);
  await res.arrayBuffer();
  assert.is(res.status, 303, 'sent to the provider');
  return res.headers.get('location') ?? '';
}

/** The browser arriving back at the daemon's callback, as the provider sent it. */
async function callback(url: URL, jar: CookieJar): Promise<{ res: Response; body: string }> {
  const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(res);
  return { res, body: await res.text() };
}

const me = async (d: RunningDaemon, jar: CookieJar) => {
  const res = await fetch(`${d.url}/api/me`, { headers: { cookie: jar.header() } });
  return { status: res.status, body: (await res.json()) as { user: string; kind: string; permissions: object } };
};

const logins = async (d: RunningDaemon, result: string) => {
  const text = await (await fetch(`${d.url}/metrics`, { headers: { authorization: ADMIN } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`watchdog_logins_total{result="${result}"}`));
  return Number(line?.split(' ').pop() ?? Number.NaN);
};
const ADMIN = `Basic ${Buffer.from('root:admin-password-0123456789').toString('base64')}`;

const test = daemonSuite<{ provider?: TestProvider }>('e2e :: dashboard login through OpenID Connect', {
  prefix: 'wd-oidc-',
  config: async (ctx) => {
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/login/oidc/callback`;
    ctx.provider = await startProvider({ ...CLIENT, redirectUri: redirect });
    await writeFile(join(ctx.dir, 'users.yml'), 'Groups:\n  mods: [moderator@a]\n', { mode: 0o600 });
    await writeFile(join(ctx.dir, 'oidc-secret'), `${CLIENT.secret}\n`, { mode: 0o600 });
    const [pa, pb] = [await freePort(), await freePort()];
    return testConfig({
      extra: [
        'Admin:',
        '  Username: root',
        '  Password: admin-password-0123456789',
        'Users:',
        '  Oidc:',
        `    Issuer: ${ctx.provider.issuer}`,
        `    ClientId: ${CLIENT.id}`,
        '    ClientSecretFile: oidc-secret',
        `    RedirectUrl: ${redirect}`,
        '    Name: Test SSO',
      ].join('\n'),
      instances: [
        { key: 'a', token: 'token-of-a-0123456789', port: pa, runCommand: '/nonexistent/watchdog-test-server' },
        { key: 'b', token: 'token-of-b-0123456789', port: pb, runCommand: '/nonexistent/watchdog-test-server' },
      ],
    }).replace(/^Urls: .*$/m, `Urls: http://127.0.0.1:${port}`);
  },
  after: (ctx) => ctx.provider?.close(),
});

test('oidc :: the login page offers the provider by its Name', async ({ daemon }) => {
  const page = await (await fetch(`${daemon!.url}/login`)).text();
  assert.match(page, /<a href="\/login\/oidc">Sign in with Test SSO<\/a>/);
});

test('oidc :: a user in group mods signs in, and holds moderator on a alone', async ({ daemon }) => {
  const d = daemon!;
  const okBefore = await logins(d, 'ok');
  const jar = new CookieJar();
  const auth = new URL(await begin(d, jar));
  assert.is(auth.searchParams.get('code_challenge_method'), 'S256');
  for (const p of ['code_challenge', 'state', 'nonce']) assert.ok(auth.searchParams.get(p), `${p} sent`);
  assert.not.ok(auth.searchParams.has('client_secret'), 'the secret never goes through the browser');

  const back = await signInAtProvider(auth.href, 'alice');
  const { res, body } = await callback(back, jar);
  assert.is(res.status, 200, body);
  // On to the dashboard from our own page: a Strict cookie is not sent on a redirect another site began.
  assert.match(body, /http-equiv="refresh" content="0;url=\/"/);
  assert.ok(jar.get('watchdog_session'), 'the session cookie is set');
  assert.match(res.headers.getSetCookie().join('\n'), /watchdog_session=[^;]+;.*HttpOnly.*SameSite=Strict/);

  const who = await me(d, jar);
  assert.is(who.status, 200);
  assert.is(who.body.user, 'alice');
  assert.is(who.body.kind, 'sso');
  assert.equal(Object.keys(who.body.permissions), ['a'], 'a moderator of a sees a alone');

  const post = (path: string) =>
    fetch(`${d.url}${path}`, {
      method: 'POST',
      headers: { cookie: jar.header(), 'x-watchdog-dashboard': '1' },
    });
  const onB = await post('/api/instances/b/restart');
  assert.is(onB.status, 403);
  assert.is(((await onB.json()) as { permission: string }).permission, 'control.restart');
  const stopA = await post('/api/instances/a/stop');
  assert.is(stopA.status, 403, 'a right the moderator role lacks');
  assert.is(((await stopA.json()) as { permission: string }).permission, 'control.stop');
  assert.is(await logins(d, 'ok'), okBefore + 1, 'counted as a login');
  assert.match(d.log(), /alice/);
  assert.not.match(d.log(), new RegExp(CLIENT.secret), 'the client secret is never logged');
});

test('oidc :: a state altered on the way back is refused, and opens no session', async ({ daemon }) => {
  const d = daemon!;
  const refusedBefore = await logins(d, 'refused');
  const jar = new CookieJar();
  const back = await signInAtProvider(await begin(d, jar), 'alice');
  back.searchParams.set('state', `${back.searchParams.get('state')}x`);
  const { res, body } = await callback(back, jar);
  assert.is(res.status, 400);
  assert.match(body, /not begun in this browser, or its state was altered/);
  assert.is(jar.get('watchdog_session'), undefined);
  assert.is((await me(d, jar)).status, 401);
  assert.is(await logins(d, 'refused'), refusedBefore + 1);
});

test('oidc :: a callback taken to another browser is refused there, and still works in the one that began it', async ({
  daemon,
}) => {
  const d = daemon!;
  const jar = new CookieJar();
  const back = await signInAtProvider(await begin(d, jar), 'alice');
  // Someone else's browser sent to this callback (a login forced on them): it holds no state cookie of this login.
  const other = new CookieJar();
  const there = await callback(back, other);
  assert.is(there.res.status, 400);
  assert.is(other.get('watchdog_session'), undefined);
  assert.is((await callback(back, jar)).res.status, 200);
  assert.is((await me(d, jar)).body.user, 'alice');
});

test('oidc :: a callback replayed (same code, same state) is refused', async ({ daemon }) => {
  const d = daemon!;
  const jar = new CookieJar();
  const state = () => jar.get('watchdog_oidc_state') ?? '';
  const back = await signInAtProvider(await begin(d, jar), 'alice');
  const kept = state();
  assert.is((await callback(back, jar)).res.status, 200);
  // A replay with the browser's state cookie put back: the daemon has already used that login up.
  const replayJar = new CookieJar();
  replayJar.set('watchdog_oidc_state', kept);
  const again = await callback(back, replayJar);
  assert.is(again.res.status, 400);
  assert.match(again.body, /expired or was already used/);
  assert.is(replayJar.get('watchdog_session'), undefined);
});

test('oidc :: an ID token without the user claim is refused, saying which claim', async ({ daemon }) => {
  const d = daemon!;
  const jar = new CookieJar();
  const back = await signInAtProvider(await begin(d, jar), 'nameless');
  const { res, body } = await callback(back, jar);
  assert.is(res.status, 403);
  assert.match(body, /no usable preferred_username claim/);
  assert.is(jar.get('watchdog_session'), undefined);
});

test.run();
