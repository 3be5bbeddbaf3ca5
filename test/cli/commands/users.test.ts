/**
 * `watchdog user …` and `watchdog key …` edit users.yml beside appsettings.yml (0600, atomic), refuse what the daemon
 * would refuse, and `watchdog check` exits 2 naming each problem of the users file.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { verifyPassword } from '../../../src/auth/password.ts';
import { cliSuite, runCli, runMain } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';

const test = cliSuite('watchdog user and key', 'wd-cli-users-');

const users = async (cwd: string) =>
  parse(await readFile(join(cwd, 'users.yml'), 'utf8')) as {
    Users?: Record<string, { Password: string; Roles?: string[] }>;
    Keys?: Record<string, { User: string; Hash: string; Permissions?: string[]; Expires?: string }>;
  };

test.before(async ({ cwd }) => {
  await writeFile(
    join(cwd, 'appsettings.yml'),
    testConfig({ instances: [{ key: 'a', port: 4301, runCommand: '/nonexistent' }] }),
  );
});

test('user add :: the password from stdin is stored as a scrypt hash, the file is 0600', async ({ cwd }) => {
  const r = await runMain(['user', 'add', 'mo', '--role', 'moderator@a', '--role', 'viewer', '--password-stdin'], {
    cwd,
    input: 'first-password\n',
  });
  assert.is(r.code, 0, r.stderr);
  const u = await users(cwd);
  assert.equal(u.Users?.mo?.Roles, ['moderator@a', 'viewer']);
  assert.match(u.Users?.mo?.Password ?? '', /^scrypt\$/);
  assert.ok(await verifyPassword('first-password', u.Users?.mo?.Password ?? ''));
  assert.is((await stat(join(cwd, 'users.yml'))).mode & 0o777, 0o600);
  assert.equal(
    (await readdir(cwd)).filter((n) => n.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
  assert.not.match(r.stdout + r.stderr, /first-password/);
});

test('user add :: a second user of the same name, an unknown role, no password source are refused', async ({ cwd }) => {
  const again = await runMain(['user', 'add', 'mo', '--password-stdin'], { cwd, input: 'another-password' });
  assert.is(again.code, 1);
  assert.match(again.stderr, /mo exists already/);
  const role = await runMain(['user', 'add', 'x', '--role', 'moderatr', '--password-stdin'], {
    cwd,
    input: 'pw-12345678',
  });
  assert.is(role.code, 2);
  assert.match(role.stderr, /users\.yml: Users\.x\.Roles\[0\]: expected a role .*got "moderatr"/);
  const noInput = await runMain(['user', 'add', 'y'], { cwd });
  assert.is(noInput.code, 2);
  assert.match(noInput.stderr, /--password-stdin/);
  const short = await runMain(['user', 'add', 'z', '--password-stdin'], { cwd, input: 'short' });
  assert.is(short.code, 2);
  assert.equal(Object.keys((await users(cwd)).Users ?? {}), ['mo'], 'nothing else was added');
});

test('user passwd and list :: a new password replaces the old; list shows roles and keys', async ({ cwd }) => {
  const r = await runMain(['user', 'passwd', 'mo', '--password-stdin'], { cwd, input: 'second-password' });
  assert.is(r.code, 0, r.stderr);
  const hash = (await users(cwd)).Users?.mo?.Password ?? '';
  assert.ok(await verifyPassword('second-password', hash));
  assert.not.ok(await verifyPassword('first-password', hash));
  const list = await runMain(['user', 'list'], { cwd });
  assert.is(list.code, 0);
  assert.match(list.stdout, /^mo\troles: moderator@a, viewer\tkeys: 0$/m);
  assert.is((await runMain(['user', 'passwd', 'ghost', '--password-stdin'], { cwd, input: 'x-12345678' })).code, 1);
});

test('key create, list, revoke :: the key is printed once and stored hashed', async ({ cwd }) => {
  const made = await runMain(
    ['key', 'create', '--user', 'mo', '--permission', 'status.read@a', '--expires-days', '2'],
    {
      cwd,
    },
  );
  assert.is(made.code, 0, made.stderr);
  const key = made.stdout.trim();
  assert.match(key, /^wdk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  const id = key.slice(4, 16);
  const stored = (await users(cwd)).Keys?.[id];
  assert.is(stored?.User, 'mo');
  assert.equal(stored?.Permissions, ['status.read@a']);
  assert.match(stored?.Hash ?? '', /^sha256\$[0-9a-f]{64}$/);
  assert.not.match(await readFile(join(cwd, 'users.yml'), 'utf8'), new RegExp(key.slice(17)));
  const days = (Date.parse(stored?.Expires ?? '') - Date.now()) / 86_400_000;
  assert.ok(days > 1.9 && days <= 2, `expires in ${days} days`);
  const list = await runMain(['key', 'list'], { cwd });
  assert.match(list.stdout, new RegExp(`^${id}\\tuser: mo\\tpermissions: status\\.read@a\\texpires: `, 'm'));
  assert.not.match(list.stdout, /wdk_/);
  const bad = await runMain(['key', 'create', '--user', 'mo', '--permission', 'status.reed'], { cwd });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /Keys\.[0-9a-f]+\.Permissions\[0\]: expected a permission/);
  assert.is((await runMain(['key', 'create', '--user', 'ghost'], { cwd })).code, 1);
  const revoked = await runMain(['key', 'revoke', id], { cwd });
  assert.is(revoked.code, 0, revoked.stderr);
  assert.equal((await users(cwd)).Keys ?? {}, {});
  assert.is((await runMain(['key', 'revoke', id], { cwd })).code, 1);
});

test('user remove :: removes the user and revokes its keys', async ({ cwd }) => {
  assert.is((await runMain(['key', 'create', '--user', 'mo'], { cwd })).code, 0);
  const r = await runMain(['user', 'remove', 'mo'], { cwd });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /revoked 1 key/);
  const u = await users(cwd);
  assert.equal([u.Users ?? {}, u.Keys ?? {}], [{}, {}]);
  assert.is((await runMain(['user', 'remove', 'mo'], { cwd })).code, 1);
});

test('check :: a broken users file exits 2 naming each problem: a name twice, an unknown permission or role, a plain password', async ({
  cwd,
}) => {
  await writeFile(
    join(cwd, 'users.yml'),
    'Users:\n  alice:\n    Password: hunter2\n    Roles: [boss]\n  bob:\n    Password: x\n  bob:\n    Password: y\n',
  );
  const dup = await runMain(['check'], { cwd });
  assert.is(dup.code, 2);
  assert.match(dup.stderr, /users\.yml:7:\d+: .*"bob" is named twice/);
  // A name given twice stops the YAML parser; the other problems are named together, each on its own line.
  await writeFile(
    join(cwd, 'users.yml'),
    'Roles:\n  helper: [status.read, files.write]\nUsers:\n  alice:\n    Password: hunter2\n    Roles: [boss]\n',
  );
  const r = await runMain(['check'], { cwd });
  assert.is(r.code, 2);
  assert.match(r.stderr, /users\.yml: Roles\.helper\[1\]: expected a permission .*got "files\.write"/);
  assert.match(r.stderr, /users\.yml: Users\.alice\.Password: expected a scrypt hash/);
  assert.match(r.stderr, /users\.yml: Users\.alice\.Roles\[0\]: expected a role .*got "boss"/);
  assert.not.match(r.stderr, /hunter2/);
  const edit = await runMain(['user', 'list'], { cwd });
  assert.is(edit.code, 2, 'the CLI will not edit a file the daemon refuses');
  // Nobody would be let in as meant: the daemon refuses to start, as it does with a broken appsettings.yml.
  const start = await runCli(['start'], { cwd, timeoutMs: 20_000 });
  assert.is(start.code, 2, start.stderr);
  assert.match(start.stderr, /users\.yml: Users\.alice\.Password: expected a scrypt hash/);
});

test.run();
