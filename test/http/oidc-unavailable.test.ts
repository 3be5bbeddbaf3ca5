/**
 * Single sign-on while its provider is down or misbehaves: the login page says it is unavailable and why, the
 * daemon goes on serving, and the next attempt asks the provider again. The provider is a real one (oidc-provider)
 * on 127.0.0.1, told to answer 503 or a body without end.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createOidcLogin } from '../../src/auth/oidc.ts';
import { parseUsers } from '../../src/auth/users-file.ts';
import { type BusEvents, createBus } from '../../src/bus.ts';
import { AnswersSchema, answerCap } from '../../src/config/sections/answers.ts';
import { OidcSchema } from '../../src/config/sections/oidc.ts';
import { createApp } from '../../src/http/app.ts';
import { CookieJar, signInAtProvider, startProvider, type TestProvider } from '../e2e/_support/oidc-provider.ts';
import { fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

const REDIRECT = 'http://127.0.0.1:5000/login/oidc/callback';
/** The default caps (Answers.Oidc…). */
const CAP = answerCap(v.parse(AnswersSchema, {}), 'Oidc');

function world(provider: TestProvider) {
  const parsed = parseUsers('Groups:\n  mods: [moderator@a]\n', 'users.yml');
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const settings = v.parse(OidcSchema, { Issuer: provider.issuer, ClientId: 'watchdog', RedirectUrl: REDIRECT });
  const bus = createBus();
  const logins: BusEvents['daemon:login'][] = [];
  bus.on('daemon:login', (e) => logins.push(e));
  const app = createApp({
    registry: memoryRegistry(memoryInstance('a', { apiToken: 't' })),
    bus,
    log: recordingLogger(),
    version: '9.9.9-test',
    users: () => parsed.db,
    oidc: createOidcLogin({
      setup: () => ({ settings, secret: 'client-secret' }),
      cap: () => ({ ...CAP, timeoutMs: 5000 }),
    }),
  });
  return { app: fromLoopback(app), logins };
}

const test = suite<{ provider?: TestProvider }>('http :: single sign-on while its provider is unavailable', {});
test.before(async (ctx) => {
  ctx.provider = await startProvider({ id: 'watchdog', secret: 'client-secret', redirectUri: REDIRECT });
});
test.after(async (ctx) => ctx.provider?.close());

test('oidc :: a provider that is down: the page says so and why; the next attempt asks again', async ({ provider }) => {
  const p = provider!;
  const w = world(p);
  p.answer('down');
  const down = await w.app.request('/login/oidc');
  assert.is(down.status, 503);
  const page = await down.text();
  assert.match(page, /Single sign-on is unavailable for now: .*could not be reached or is not an OpenID provider/);
  assert.match(page, /Sign in with single sign-on/, 'the form and the link are still there');
  assert.equal(
    w.logins.map((l) => l.result),
    ['unavailable'],
  );
  assert.match(await (await w.app.request('/login')).text(), /single sign-on is unavailable for now/);

  p.answer('provider');
  const up = await w.app.request('/login/oidc');
  assert.is(up.status, 303, await up.text());
  assert.ok(up.headers.get('location')?.startsWith(`${p.issuer}/auth?`), 'sent to the provider');
  assert.not.match(await (await w.app.request('/login')).text(), /unavailable/, 'the page forgets the outage');
});

test('oidc :: a provider answering without end is cut at the cap; the daemon goes on', async ({ provider }) => {
  const p = provider!;
  const w = world(p);
  p.answer('endless');
  try {
    const res = await w.app.request('/login/oidc');
    assert.is(res.status, 503);
    assert.match(await res.text(), /passed 256 kB, the most it may be/);
  } finally {
    p.answer('provider');
  }
  assert.is((await w.app.request('/login')).status, 200);
});

test('oidc :: an ID token its provider’s keys (JWKS) do not verify is refused', async ({ provider }) => {
  const p = provider!;
  const w = world(p);
  const jar = new CookieJar();
  const begun = await w.app.request('/login/oidc');
  jar.take(begun);
  p.answer('forged-jwks');
  try {
    const back = await signInAtProvider(begun.headers.get('location') ?? '', 'alice');
    const res = await w.app.request(`${back.pathname}${back.search}`, { headers: { cookie: jar.header() } });
    const page = await res.text();
    assert.is(res.status, 401, page);
    assert.match(page, /Single sign-on failed: single sign-on did not confirm the sign-in \(.*signature/i);
    assert.not.match(res.headers.getSetCookie().join('\n'), /watchdog_session=[^;]/);
    assert.equal(
      w.logins.map((l) => l.result),
      ['refused'],
    );
  } finally {
    p.answer('provider');
  }
});

test.run();
