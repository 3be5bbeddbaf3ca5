/**
 * The dashboard's login in Chromium against the real daemon with a users file: a moderator of one instance sees
 * that card only, with its restart and console and nothing it may not use; the Admin login sees every card; logout
 * ends the session on the daemon; a forged or expired cookie is refused; a lockout a stranger causes ends by the cap.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import type { DaemonCtx, RunningDaemon } from '../../_support/daemon.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fastHash } from '../../auth/_support/hash.ts';
import { basicAuth, instancesUp, TOKENS } from '../_support/accounts.ts';
import { type Browser, browserSuite, openBrowser, screenshot } from './_support/browser.ts';

const PASSWORD = 'moderator-pw-1';
const ADMIN = { user: 'root', password: 'admin-password-0123456789' };
const NO_PROGRAM = '/nonexistent/watchdog-test-server';

type Ctx = DaemonCtx & { browser?: Browser; yaml: string };

async function configOf(ctx: Ctx): Promise<string> {
  const h = await fastHash(PASSWORD);
  const users = [
    'Users:',
    '  mo:',
    `    Password: "${h}"`,
    '    Roles: [moderator@a]',
    '  ops:',
    `    Password: "${h}"`,
    '    Roles: [operator]',
    '',
  ];
  await writeFile(join(ctx.dir, 'users.yml'), users.join('\n'), { mode: 0o600 });
  const [pa, pb] = [await freePort(), await freePort()];
  ctx.yaml = testConfig({
    extra: [
      `Admin:\n  Username: ${ADMIN.user}\n  Password: ${ADMIN.password}`,
      // Many logins from one address in this file: the per-source bucket is the unit tests'.
      'Users:\n  LoginAttemptsPerMinute: 1000\n  LoginFailuresBeforeLockout: 1\n  LoginLockoutSeconds: 1\n  LoginLockoutMaxSeconds: 2',
    ].join('\n'),
    instances: [
      { key: 'a', token: TOKENS.a, port: pa, runCommand: NO_PROGRAM, extra: '      Console: true' },
      { key: 'b', token: TOKENS.b, port: pb, runCommand: NO_PROGRAM, extra: '      Console: true' },
    ],
  });
  return ctx.yaml;
}

const test = browserSuite('e2e :: dashboard login in Chromium', (name) =>
  daemonSuite<{ browser?: Browser; yaml: string }>(name, {
    ctx: { yaml: '' },
    config: configOf,
    before: async (ctx) => {
      await instancesUp(ctx.daemon!);
      ctx.browser = await openBrowser();
    },
    stopping: (ctx) => ctx.browser?.close(),
  }),
);

/** Logs in on the form and waits for the dashboard; the session cookie's value. */
async function logIn(b: Browser, d: RunningDaemon, user: string, password: string): Promise<string> {
  await b.context.clearCookies();
  await b.page.goto(`${d.url}/`);
  assert.match(b.page.url(), /\/login$/, 'a browser without a session is sent to the login form');
  if (user === 'mo') await screenshot(b.page, 'dashboard-login.png');
  await b.page.fill('input[name="user"]', user);
  await b.page.fill('input[name="password"]', password);
  await Promise.all([b.page.waitForURL(`${d.url}/`), b.page.click('button[type="submit"]')]);
  await waitFor('the page to be live', async () => (await b.page.textContent('#conn')) === 'live' || undefined);
  const cookie = (await b.context.cookies()).find((c) => c.name === 'watchdog_session');
  assert.ok(cookie, 'the session cookie');
  assert.equal([cookie.httpOnly, cookie.sameSite, cookie.path], [true, 'Strict', '/']);
  return cookie.value;
}

const withCookie = (d: RunningDaemon, path: string, id: string, init: RequestInit = {}) =>
  fetch(`${d.url}${path}`, { ...init, headers: { cookie: `watchdog_session=${id}`, ...init.headers } });

test('login :: a moderator of a sees only a: its restart and console, nothing it may not use', async (ctx: Ctx) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  const id = await logIn(b, d, 'mo', PASSWORD);
  assert.equal(await b.page.$$eval('article.card', (cards) => cards.map((c) => c.getAttribute('data-key'))), ['a']);
  assert.is(await b.page.textContent('#who'), 'mo');
  await screenshot(b.page, 'dashboard-moderator.png');
  assert.ok(await b.page.isVisible('#logout'));
  const card = 'article.card[data-key="a"]';
  assert.ok(await b.page.isEnabled(`${card} button[data-action="restart"]`), 'restart');
  assert.is(await b.page.getAttribute(`${card} button[data-action="stop"]`, 'title'), 'needs control.stop on a');
  assert.ok(await b.page.isDisabled(`${card} button[data-action="stop"]`));
  await b.page.click(`${card} details.log summary`);
  assert.ok(await b.page.isVisible(`${card} form.console`), 'the console');
  assert.not.ok(await b.page.isVisible(`${card} details.backups`), 'no backups panel');
  assert.not.ok(await b.page.isVisible(`${card} details.files`), 'no files panel');
  // The daemon refuses what the page hides, naming the right.
  const onB = await withCookie(d, '/api/instances/b/restart', id, {
    method: 'POST',
    headers: { 'x-watchdog-dashboard': '1' },
  });
  assert.equal([onB.status, ((await onB.json()) as { permission?: string }).permission], [403, 'control.restart']);
  const list = await withCookie(d, '/api/instances', id);
  assert.equal(
    ((await list.json()) as Array<{ key: string }>).map((s) => s.key),
    ['a'],
  );
  assert.is((await withCookie(d, '/metrics', id)).status, 403, 'metrics need status.read on every instance');
  const hold = await withCookie(d, '/api/instances/a/hold', id, {
    method: 'POST',
    headers: { 'x-watchdog-dashboard': '1' },
  });
  assert.is(hold.status, 200, 'a right the moderator holds');
  const audit = await waitFor('the login and the hold in audit.log', async () => {
    const text = await readFile(join(d.dir, 'logs', 'audit.log'), 'utf8').catch(() => '');
    return /"action":"login","user":"mo"/.test(text) && /"action":"hold".*"user":"mo"/.test(text) ? text : undefined;
  });
  assert.match(audit, /"result":"ok"/);
});

test('login :: the Admin login on the form sees every card with no right missing', async (ctx: Ctx) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  await logIn(b, d, ADMIN.user, ADMIN.password);
  await waitFor('both cards', async () => (await b.page.$$('article.card')).length === 2 || undefined);
  const titles = await b.page.$$eval('article.card button[data-action]', (bs) =>
    bs.map((x) => x.getAttribute('title') ?? ''),
  );
  assert.not.ok(
    titles.some((t) => t.startsWith('needs ')),
    titles.join(' | '),
  );
  assert.ok(await b.page.isVisible('article.card[data-key="b"] details.files'));
});

test('login :: logout ends the session on the daemon: the same cookie is refused afterwards', async (ctx: Ctx) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  const id = await logIn(b, d, 'mo', PASSWORD);
  assert.is((await withCookie(d, '/api/me', id)).status, 200);
  await Promise.all([b.page.waitForURL(`${d.url}/login`), b.page.click('#logout')]);
  const after = await withCookie(d, '/api/me', id);
  assert.is(after.status, 401, 'the cookie no longer lets anyone in');
  assert.match(((await after.json()) as { error: string }).error, /session has ended/);
});

test('login :: a forged cookie is refused, and the browser is sent to the login form', async (ctx: Ctx) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  const forged = Buffer.alloc(32, 7).toString('base64url');
  assert.is((await withCookie(d, '/api/instances', forged)).status, 401);
  await b.context.clearCookies();
  await b.context.addCookies([{ name: 'watchdog_session', value: forged, url: d.url }]);
  await b.page.goto(`${d.url}/`);
  assert.match(b.page.url(), /\/login$/);
});

test('login :: a stranger failing locks the account, for no longer than the cap', async (ctx: Ctx) => {
  const d = ctx.daemon!;
  const post = (password: string) =>
    fetch(`${d.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ user: 'ops', password }),
    });
  assert.is((await post('wrong-1')).status, 401);
  assert.is((await post('wrong-2')).status, 401, 'the failure that locks it');
  const locked = await post(PASSWORD);
  assert.is(locked.status, 429, 'even the right password while locked');
  assert.ok(Number(locked.headers.get('retry-after')) <= 2, 'within LoginLockoutMaxSeconds');
  const ok = await waitFor(
    'the real user to get in',
    async () => ((await post(PASSWORD)).status === 303 ? true : undefined),
    5_000,
    250,
  );
  assert.ok(ok);
  const metrics = await fetch(`${d.url}/metrics`, {
    headers: { authorization: basicAuth(ADMIN.user, ADMIN.password) },
  });
  const text = await metrics.text();
  assert.match(text, /watchdog_logins_total\{result="locked"\} [1-9]/);
  // The moderator's refused restart of b, in the first test.
  assert.match(text, /watchdog_permission_refusals_total\{permission="control.restart"\} [1-9]/);
});

test('login :: a session past Users.SessionMinutes is refused (the setting reloaded)', async (ctx: Ctx) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  const id = await logIn(b, d, 'mo', PASSWORD);
  await writeFile(join(d.dir, 'appsettings.yml'), ctx.yaml.replace('Users:\n', 'Users:\n  SessionMinutes: 0.01\n'));
  d.proc.kill('SIGHUP');
  await waitFor(
    'the session to expire',
    async () => ((await withCookie(d, '/api/me', id)).status === 401 ? true : undefined),
    10_000,
    200,
  );
  await b.page.goto(`${d.url}/`);
  assert.match(b.page.url(), /\/login$/);
});

test.run();
