/**
 * `watchdog login` against the real daemon with a users file: the daemon makes the user a key (its rights, 30 days),
 * and only that key is kept (0600) for the daemon's address and sent where no token is given; a user with a
 * one-time code logs in with it; a wrong password, or a login that is no user's, keeps nothing; --forget drops it.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { newApiKey } from '../../../src/auth/api-keys.ts';
import { newTotpSecret, totpAt } from '../../../src/auth/totp.ts';
import { runMain } from '../../_support/cli.ts';
import { daemonSuite, type RunningDaemon } from '../../_support/daemon.ts';
import { waitFor } from '../../_support/env.ts';
import { fastHash } from '../../auth/_support/hash.ts';
import { accountsConfig, instancesUp } from '../../e2e/_support/accounts.ts';

const PASSWORD = 'moderator-pw-1';
/** mo's key for holding `a`, and nothing else. */
const KEY = newApiKey();
/** tom's one-time-code secret. */
const SECRET = newTotpSecret();
const DAY = 86_400_000;

const test = daemonSuite('watchdog login :: a kept login per daemon', {
  config: async (ctx) => {
    const hash = await fastHash(PASSWORD);
    const users = [
      `Users:\n  mo:\n    Password: "${hash}"\n    Roles: [moderator@a]`,
      `  tom:\n    Password: "${hash}"\n    Roles: [viewer@b]\n    Totp: ${SECRET}`,
      `Keys:\n  ${KEY.id}:\n    User: mo\n    Hash: "${KEY.hash}"\n    Permissions: [hold@a]\n`,
    ];
    await writeFile(join(ctx.dir, 'users.yml'), users.join('\n'), { mode: 0o600 });
    return accountsConfig();
  },
  before: (ctx) => instancesUp(ctx.daemon!),
});

/** The CLI in a folder without appsettings.yml (so no local token), its config home in the daemon's folder. */
const cli = (dir: string, args: string[], input?: string, env: Record<string, string> = {}) =>
  runMain(args, { cwd: '/', env: { XDG_CONFIG_HOME: join(dir, 'home'), WATCHDOG_ADMIN: '', ...env }, input });

const loginsOf = (d: RunningDaemon) => join(d.dir, 'home', 'watchdog', 'logins.json');
const kept = async (d: RunningDaemon) =>
  JSON.parse(await readFile(loginsOf(d), 'utf8')) as Record<string, { user: string; key: string; expires: string }>;
/** The daemon's users file: the keys it holds. */
const keysOn = async (d: RunningDaemon) =>
  (
    parse(await readFile(join(d.dir, 'users.yml'), 'utf8')) as {
      Keys: Record<string, { User: string; Expires?: string }>;
    }
  ).Keys;

test('login :: a wrong password is refused and nothing is kept', async ({ daemon }) => {
  const d = daemon!;
  const r = await cli(d.dir, ['login', '--url', d.url, '--user', 'mo', '--password-stdin'], 'not-the-password\n');
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /401: the user name and password were refused/);
  assert.not.match(r.stderr + r.stdout, /not-the-password/);
  assert.is(await stat(loginsOf(d)).catch(() => null), null, 'no logins file');
});

test('login :: without --user and without a terminal, the user is asked for by name', async ({ daemon }) => {
  const d = daemon!;
  const r = await cli(d.dir, ['login', '--url', d.url, '--password-stdin'], `${PASSWORD}\n`, { WATCHDOG_USER: '' });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /give --user or WATCHDOG_USER/);
});

test('login :: the daemon makes a 30-day key; only it is kept, 0600, and used: what the user may, 403 naming the rest', async ({
  daemon,
}) => {
  const d = daemon!;
  // The user from WATCHDOG_USER: no --user.
  const login = await cli(d.dir, ['login', '--url', d.url, '--password-stdin'], `${PASSWORD}\n`, {
    WATCHDOG_USER: 'mo',
  });
  assert.is(login.code, 0, login.stderr);
  assert.match(login.stdout, `logged in to ${d.url} as mo until `);
  const file = loginsOf(d);
  assert.is((await stat(file)).mode & 0o777, 0o600);
  assert.is((await stat(join(file, '..'))).mode & 0o777, 0o700);
  const text = await readFile(file, 'utf8');
  assert.not.match(text, PASSWORD, 'the password is not kept');
  const entry = (await kept(d))[d.url]!;
  assert.is(entry.user, 'mo');
  const id = /^wdk_([0-9a-f]{12})_/.exec(entry.key)?.[1];
  assert.ok(id, entry.key);
  // The daemon's users file holds the key, hashed, for mo, expiring in 30 days.
  const stored = (await keysOn(d))[id!];
  assert.is(stored?.User, 'mo');
  assert.not.match(await readFile(join(d.dir, 'users.yml'), 'utf8'), entry.key);
  const days = (Date.parse(stored?.Expires ?? '') - Date.now()) / DAY;
  assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
  assert.is(entry.expires, stored?.Expires);

  const hold = await cli(d.dir, ['hold', 'a', '--url', d.url]);
  assert.is(hold.code, 0, hold.stderr);
  const stop = await cli(d.dir, ['stop', 'a', '--url', d.url]);
  assert.is(stop.code, 1);
  assert.match(stop.stderr, /403.*control\.stop/);
  const status = await cli(d.dir, ['status', '--url', d.url, '--json']);
  assert.is(status.code, 0, status.stderr);
  assert.equal(
    (JSON.parse(status.stdout) as { key: string }[]).map((r) => r.key),
    ['a'],
    'status lists what the user may read',
  );
  // The audit log names the key's making, and the key on the hold it let through.
  await waitFor('the key and the hold in the audit log', async () => {
    const audit = await readFile(join(d.dir, 'logs', 'audit.log'), 'utf8');
    return (
      audit.includes(`"action":"key.create","user":"mo","name":"mo"`) &&
      audit.includes(`"action":"hold","user":"key:${id}"`)
    );
  });
  // Another daemon's address gets no credentials from it.
  const elsewhere = await cli(d.dir, ['stop', 'a', '--url', `${d.url}/`.replace('127.0.0.1', 'localhost')]);
  assert.is(elsewhere.code, 2, elsewhere.stderr);
  assert.match(elsewhere.stderr, /no token for instance a/);

  const forget = await cli(d.dir, ['login', '--forget', '--url', d.url]);
  assert.is(forget.code, 0, forget.stderr);
  assert.match(forget.stdout, `watchdog key revoke ${id}`);
  assert.equal(await kept(d), {});
});

test('login :: a user with a one-time code logs in with it; the session that asked for the key is ended', async ({
  daemon,
}) => {
  const d = daemon!;
  const code = totpAt(SECRET, Date.now());
  const args = ['login', '--url', d.url, '--user', 'tom', '--password-stdin', '--code', code];
  const login = await cli(d.dir, args, `${PASSWORD}\n`);
  assert.is(login.code, 0, login.stderr);
  const entry = (await kept(d))[d.url]!;
  assert.is(entry.user, 'tom');
  const status = await cli(d.dir, ['status', '--url', d.url, '--json']);
  assert.equal(
    (JSON.parse(status.stdout) as { key: string }[]).map((r) => r.key),
    ['b'],
    status.stderr,
  );
  await waitFor('the logout in the audit log', async () =>
    (await readFile(join(d.dir, 'logs', 'audit.log'), 'utf8')).includes('"action":"logout","user":"tom"'),
  );
  // The same code again is refused (used), and the login kept stays as it was.
  const again = await cli(d.dir, args, `${PASSWORD}\n`);
  assert.is(again.code, 1, again.stderr);
  assert.match(again.stderr, /refused the login of tom: wrong user name, password or one-time code/);
  assert.equal((await kept(d))[d.url], entry);
  await cli(d.dir, ['login', '--forget', '--url', d.url]);
});

test('login :: the Admin login is no user to give a key to: refused, saying so, nothing kept', async ({ daemon }) => {
  const d = daemon!;
  const r = await cli(
    d.dir,
    ['login', '--url', d.url, '--user', 'root', '--password-stdin'],
    'admin-password-0123456789\n',
  );
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /403: the watchdog at .* made no key: root is no user of the users file/);
  assert.equal(await kept(d), {});
});

test('login :: an API key given with --token is sent as one (Bearer), with its own scope', async ({ daemon }) => {
  const d = daemon!;
  const hold = await cli(d.dir, ['hold', 'a', '--url', d.url, '--token', KEY.key]);
  assert.is(hold.code, 0, hold.stderr);
  const restart = await cli(d.dir, ['restart', 'a', '--url', d.url, '--token', KEY.key]);
  assert.is(restart.code, 1);
  assert.match(restart.stderr, /403.*control\.restart/);
});

test.run();
