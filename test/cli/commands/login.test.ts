/**
 * `watchdog login` against the real daemon with a users file: a checked login is kept (0600) for the daemon's
 * address and sent where no token is given; a wrong password is never kept; --forget drops it.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { newApiKey } from '../../../src/auth/api-keys.ts';
import { runCli } from '../../_support/cli.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { fastHash } from '../../auth/_support/hash.ts';
import { accountsConfig, instancesUp } from '../../e2e/_support/accounts.ts';

const PASSWORD = 'moderator-pw-1';
/** mo's key for holding `a`, and nothing else. */
const KEY = newApiKey();

const test = daemonSuite('watchdog login :: a kept login per daemon', {
  config: async (ctx) => {
    const hash = await fastHash(PASSWORD);
    const users = [
      `Users:\n  mo:\n    Password: "${hash}"\n    Roles: [moderator@a]`,
      `Keys:\n  ${KEY.id}:\n    User: mo\n    Hash: "${KEY.hash}"\n    Permissions: [hold@a]\n`,
    ];
    await writeFile(join(ctx.dir, 'users.yml'), users.join('\n'), { mode: 0o600 });
    return accountsConfig();
  },
  before: (ctx) => instancesUp(ctx.daemon!),
});

/** The CLI in a folder without appsettings.yml (so no local token), its config home in the daemon's folder. */
const cli = (dir: string, args: string[], input?: string) =>
  runCli(args, { cwd: '/', env: { XDG_CONFIG_HOME: join(dir, 'home'), WATCHDOG_ADMIN: '' }, input });

test('login :: a wrong password is refused and nothing is kept', async ({ daemon }) => {
  const d = daemon!;
  const r = await cli(d.dir, ['login', '--url', d.url, '--user', 'mo', '--password-stdin'], 'not-the-password\n');
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /401: the user name and password were refused/);
  assert.not.match(r.stderr + r.stdout, /not-the-password/);
  const kept = await stat(join(d.dir, 'home', 'watchdog', 'logins.json')).catch(() => null);
  assert.is(kept, null, 'no logins file');
});

test('login :: a checked login is kept 0600 and used for that daemon: what the user may, and 403 naming the rest', async ({
  daemon,
}) => {
  const d = daemon!;
  const login = await cli(d.dir, ['login', '--url', d.url, '--user', 'mo', '--password-stdin'], `${PASSWORD}\n`);
  assert.is(login.code, 0, login.stderr);
  assert.match(login.stdout, `logged in to ${d.url} as mo`);
  const file = join(d.dir, 'home', 'watchdog', 'logins.json');
  assert.is((await stat(file)).mode & 0o777, 0o600);
  assert.is((await stat(join(file, '..'))).mode & 0o777, 0o700);
  assert.equal(JSON.parse(await readFile(file, 'utf8')), { [d.url]: { user: 'mo', password: PASSWORD } });

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
  // Another daemon's address gets no credentials from it.
  const elsewhere = await cli(d.dir, ['stop', 'a', '--url', `${d.url}/`.replace('127.0.0.1', 'localhost')]);
  assert.is(elsewhere.code, 2, elsewhere.stderr);
  assert.match(elsewhere.stderr, /no token for instance a/);

  const forget = await cli(d.dir, ['login', '--forget', '--url', d.url]);
  assert.is(forget.code, 0, forget.stderr);
  assert.equal(JSON.parse(await readFile(file, 'utf8')), {});
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
