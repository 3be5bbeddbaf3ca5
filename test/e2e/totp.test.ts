/**
 * One-time codes on the real daemon (README "Users and rights"): the dashboard login with a code, a wrong or replayed
 * one refused, and a TOTP user's password alone refused over Basic; no secret or code in the logs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { matchingStep, newTotpSecret, totpAt } from '../../src/auth/totp.ts';
import type { RunningDaemon } from '../_support/daemon.ts';
import { daemonSuite } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { accountsConfig, afterUsersRead, basicAuth, instancesUp, send } from './_support/accounts.ts';

const PASSWORD = 'totp-user-pw-1';
const SECRET = newTotpSecret();
/** Every code the tests sent, to look for in the logs. */
const sent: string[] = [];

const test = daemonSuite('e2e :: one-time codes (TOTP)', {
  config: async (ctx) => {
    const h = await fastHash(PASSWORD);
    const users = [
      'Users:',
      '  tom:',
      `    Password: "${h}"`,
      '    Roles: [moderator@a]',
      `    Totp: ${SECRET}`,
      '  lou:',
      `    Password: "${h}"`,
      `    Totp: ${SECRET}`,
      '  pat:',
      `    Password: "${h}"`,
      '    Roles: [viewer]',
      '',
    ].join('\n');
    await writeFile(join(ctx.dir, 'users.yml'), users, { mode: 0o600 });
    // A source may try often here, so the per-account lockout is what a test of it meets. Every failed login is
    // audited in full (a 1 ms refusal window): which came first from 127.0.0.1 would otherwise decide what is there.
    const yaml = await accountsConfig('Users:\n  LoginAttemptsPerMinute: 1000');
    return yaml.replace(
      '  RejectedCheckinLogSeconds: 0',
      '  RejectedCheckinLogSeconds: 0\n  RefusedRequestLogSeconds: 0.001',
    );
  },
  before: (ctx) => instancesUp(ctx.daemon!),
});

/** `POST /login` as the form sends it; the session id when it logged in. */
async function login(d: RunningDaemon, user: string, password: string, code?: string) {
  if (code !== undefined) sent.push(code);
  const form = new URLSearchParams({ user, password, ...(code === undefined ? {} : { code }) });
  const res = await fetch(`${d.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const page = await res.text();
  const session = /watchdog_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  return { status: res.status, page, session };
}

/** A six-digit code that is none of the window's: a wrong one, for sure. */
function wrongCode(now: number): string {
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (matchingStep(SECRET, code, now) === undefined) return code;
  }
}

test('totp :: the form has a one-time-code field', async ({ daemon }) => {
  const page = await (await fetch(`${daemon!.url}/login`)).text();
  assert.match(page, /<input name="code"[^>]*autocomplete="one-time-code"/);
});

test('totp :: a good code logs in; the same code again is refused, within its window', async ({ daemon }) => {
  const d = daemon!;
  const code = totpAt(SECRET, Date.now());
  const first = await login(d, 'tom', PASSWORD, code);
  assert.is(first.status, 303, first.page);
  assert.ok(first.session);
  const me = await fetch(`${d.url}/api/me`, { headers: { cookie: `watchdog_session=${first.session}` } });
  assert.is(((await me.json()) as { user: string }).user, 'tom');
  const replay = await login(d, 'tom', PASSWORD, code);
  assert.is(replay.status, 401, 'a code seen once is refused ever after');
  assert.is(replay.session, undefined);
  assert.match(replay.page, /Wrong user name or password \(or one-time code\)/);
});

test('totp :: a wrong or missing code is refused like a wrong password', async ({ daemon }) => {
  const d = daemon!;
  const wrong = await login(d, 'tom', PASSWORD, wrongCode(Date.now()));
  assert.is(wrong.status, 401);
  assert.is(wrong.session, undefined);
  const none = await login(d, 'tom', PASSWORD);
  assert.is(none.status, 401, 'no code at all');
  const badPassword = await login(d, 'tom', 'not-the-password', totpAt(SECRET, Date.now()));
  assert.is(badPassword.status, 401);
  assert.is(wrong.page.match(/role="alert">([^<]*)/)?.[1], badPassword.page.match(/role="alert">([^<]*)/)?.[1]);
  const plain = await login(d, 'pat', PASSWORD);
  assert.is(plain.status, 303, 'a user without Totp logs in with the password alone');
});

test('totp :: Basic with the password alone is 401 for a TOTP user, saying how to get in', async ({ daemon }) => {
  const d = daemon!;
  for (const path of ['/api/me', '/instances/a/status']) {
    const res = await send(d, 'GET', path, basicAuth('tom', PASSWORD));
    assert.is(res.status, 401, path);
    assert.match(JSON.parse(res.body).error, /log in at \/login, or use an API key/, path);
  }
  assert.is((await send(d, 'GET', '/instances/a/status', basicAuth('pat', PASSWORD))).status, 200, 'without Totp');
});

test('totp :: wrong codes with the right password count towards the account lockout', async ({ daemon }) => {
  const d = daemon!;
  // The defaults: 5 failures in a row are free, the 6th locks the account, and the next attempt meets the lock.
  const results: number[] = [];
  for (let i = 0; i < 7; i++) results.push((await login(d, 'lou', PASSWORD, wrongCode(Date.now()))).status);
  assert.equal(results, [401, 401, 401, 401, 401, 401, 429]);
  const locked = await login(d, 'lou', PASSWORD, totpAt(SECRET, Date.now()));
  assert.is(locked.status, 429, 'even with a good code, while locked');
  assert.match(locked.page, /This account is locked for now/);
});

test('totp :: turning one-time codes on ends the sessions the user had open', async ({ daemon, dir }) => {
  const d = daemon!;
  const { session } = await login(d, 'pat', PASSWORD);
  assert.ok(session, 'pat logs in with a password alone');
  const cookie = { cookie: `watchdog_session=${session}` };
  assert.is((await fetch(`${d.url}/api/me`, { headers: cookie })).status, 200);
  const file = join(dir, 'users.yml');
  const text = await readFile(file, 'utf8');
  await afterUsersRead(d, () => writeFile(file, `${text.trimEnd()}\n    Totp: ${newTotpSecret()}\n`));
  assert.is((await fetch(`${d.url}/api/me`, { headers: cookie })).status, 401);
});

test('totp :: no log or audit line holds the secret or a code', async ({ daemon }) => {
  const d = daemon!;
  const audit = join(d.dir, 'logs', 'audit.log');
  // The audit log is written behind the answers: wait for the line this test needs, not for the first one.
  const text = await waitFor('a wrong-code login in the audit log', async () => {
    const t = await readFile(audit, 'utf8').catch(() => '');
    return /"action":"login".*"result":"wrong_code"/.test(t) ? t : undefined;
  });
  assert.ok(sent.length > 5);
  for (const where of [text, d.log()]) {
    assert.not.ok(where.includes(SECRET), 'the secret');
    for (const code of sent) assert.not.match(where, new RegExp(`(?<![0-9])${code}(?![0-9])`), `the code ${code}`);
  }
});

test.run();
