import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashApiKey, newApiKey, parseBearer } from '../../src/auth/api-keys.ts';
import { can, findApiKey, findUser, type Principal } from '../../src/auth/can.ts';
import { hashPassword, isPasswordHash, verifyPassword } from '../../src/auth/password.ts';
import { BUILTIN_ROLES, PERMISSIONS, type Permission } from '../../src/auth/permissions.ts';
import { parseUsers, type UsersDb } from '../../src/auth/users-file.ts';
import { FAST, fastHash } from './_support/hash.ts';

const test = suite('auth :: can()');

async function db(yaml: (hash: string) => string): Promise<UsersDb> {
  const parsed = parseUsers(yaml(await fastHash('pw-123456')), 'users.yml');
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.db;
}

const userOf = (d: UsersDb, name: string): Principal => ({ kind: 'user', user: d.users.get(name)! });

test('can :: the built-in roles hold exactly the permissions of the interface', () => {
  assert.equal([...(BUILTIN_ROLES.viewer ?? [])], ['status.read', 'logs.read']);
  assert.equal([...(BUILTIN_ROLES.moderator ?? [])].sort(), [
    'console.send',
    'control.restart',
    'hold',
    'logs.read',
    'status.read',
  ]);
  assert.equal([...(BUILTIN_ROLES.operator ?? [])].sort(), [
    'backups.create',
    'backups.read',
    'console.send',
    'control.restart',
    'control.rollback',
    'control.stop',
    'control.update',
    'files.read',
    'hold',
    'logs.read',
    'status.read',
  ]);
  assert.equal([...(BUILTIN_ROLES.admin ?? [])], [...PERMISSIONS]);
});

test('can :: a role@instance holds on that instance only, never on another or on all', async () => {
  const d = await db((h) => `Users:\n  mo:\n    Password: "${h}"\n    Roles: [moderator@a]\n`);
  const mo = userOf(d, 'mo');
  assert.ok(can(mo, 'control.restart', 'a', d));
  assert.not.ok(can(mo, 'control.restart', 'b', d), 'another instance');
  assert.not.ok(can(mo, 'control.restart', '*', d), 'a grant on a does not hold for "*"');
  assert.not.ok(can(mo, 'control.stop', 'a', d), 'a right the role lacks');
});

test('can :: a role without @ holds on every instance; roles of one’s own work', async () => {
  const d = await db(
    (h) => `Roles:\n  cdn: [control.update]\nUsers:\n  v:\n    Password: "${h}"\n    Roles: [viewer, cdn@b]\n`,
  );
  const v = userOf(d, 'v');
  for (const i of ['a', 'b', 'zzz']) assert.ok(can(v, 'status.read', i, d));
  assert.ok(can(v, 'control.update', 'b', d));
  assert.not.ok(can(v, 'control.update', 'a', d));
});

test('can :: a key holds the intersection of its list and its user’s current rights', async () => {
  const base = (roles: string) => (h: string) =>
    `Users:\n  op:\n    Password: "${h}"\n    Roles: [${roles}]\nKeys:\n  k1:\n    User: op\n    Hash: "${hashApiKey('x')}"\n    Permissions: [status.read@a, control.stop]\n`;
  const d = await db(base('operator@a'));
  const key: Principal = { kind: 'key', key: d.keys.get('k1')! };
  assert.ok(can(key, 'status.read', 'a', d));
  assert.ok(can(key, 'control.stop', 'a', d));
  assert.not.ok(can(key, 'status.read', 'b', d), 'the key is scoped to a');
  assert.not.ok(can(key, 'control.stop', 'b', d), 'the user holds nothing on b');
  assert.not.ok(can(key, 'control.restart', 'a', d), 'the user holds it, the key does not');
  // The user loses operator: the key loses control.stop with it, at once.
  const lowered = await db(base('viewer'));
  assert.not.ok(can(key, 'control.stop', 'a', lowered));
  assert.ok(can(key, 'status.read', 'a', lowered));
});

test('can :: a key is refused after its expiry and once its user is gone', async () => {
  const d = await db(
    (h) =>
      `Users:\n  op:\n    Password: "${h}"\n    Roles: [admin]\nKeys:\n  k1:\n    User: op\n    Hash: "${hashApiKey('x')}"\n    Expires: "2030-01-01T00:00:00Z"\n`,
  );
  const key: Principal = { kind: 'key', key: d.keys.get('k1')! };
  assert.ok(can(key, 'status.read', 'a', d, Date.parse('2029-12-31T23:59:59Z')));
  assert.not.ok(can(key, 'status.read', 'a', d, Date.parse('2030-01-01T00:00:00Z')));
  const gone: UsersDb = { users: new Map(), keys: d.keys, groups: new Map() };
  assert.not.ok(can(key, 'status.read', 'a', gone, 0));
});

test('can :: an ApiToken holds everything but users.manage, on its own instance only; Admin holds all', () => {
  const d: UsersDb = { users: new Map(), keys: new Map(), groups: new Map() };
  const token: Principal = { kind: 'instance-token', instance: 'a' };
  for (const p of PERMISSIONS) {
    assert.is(can(token, p, 'a', d), p !== 'users.manage', p);
    assert.not.ok(can(token, p, 'b', d), `${p} on b`);
    assert.ok(can({ kind: 'admin', name: 'root' }, p, 'b', d));
  }
});

test('can :: a removed user’s stale principal is refused (can reads the file in force)', async () => {
  const d = await db((h) => `Users:\n  mo:\n    Password: "${h}"\n    Roles: [admin]\n`);
  const mo = userOf(d, 'mo');
  assert.ok(can(mo, 'hold', 'a', d));
  assert.not.ok(can(mo, 'hold', 'a', { users: new Map(), keys: new Map(), groups: new Map() }));
});

test('keys :: a new key is found by its token; a changed, unknown or expired one is not', async () => {
  const made = newApiKey();
  const d = await db(
    (h) =>
      `Users:\n  op:\n    Password: "${h}"\n    Roles: [viewer]\nKeys:\n  ${made.id}:\n    User: op\n    Hash: "${made.hash}"\n    Expires: "2030-01-01T00:00:00Z"\n`,
  );
  assert.is(findApiKey(made.key, d, 0)?.id, made.id);
  const off = `${made.key.slice(0, -1)}${made.key.endsWith('A') ? 'B' : 'A'}`;
  assert.is(findApiKey(off, d, 0), undefined, 'one character off');
  assert.is(findApiKey(newApiKey().key, d, 0), undefined, 'another key');
  assert.is(findApiKey(made.key, d, Date.parse('2030-01-01T00:00:01Z')), undefined, 'expired');
  assert.is(parseBearer(`Bearer ${made.key}`), made.key);
  assert.is(parseBearer(`bearer  ${made.key} `), made.key);
  assert.is(parseBearer(`Basic ${made.key}`), undefined);
});

test('passwords :: scrypt hashes verify, carry their parameters, and differ per salt', async () => {
  const a = await hashPassword('correct horse', FAST);
  const b = await hashPassword('correct horse', FAST);
  assert.ok(isPasswordHash(a));
  assert.match(a, /^scrypt\$N=1024,r=1,p=1\$/);
  assert.is.not(a, b, 'a fresh salt each time');
  assert.ok(await verifyPassword('correct horse', a));
  assert.not.ok(await verifyPassword('correct horsf', a));
  assert.not.ok(await verifyPassword('correct horse', 'correct horse'), 'a plain text is never a hash');
  assert.not.ok(
    isPasswordHash('scrypt$N=2,r=1,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    'too cheap',
  );
  const d = await db((h) => `Users:\n  u:\n    Password: "${h}"\n`);
  const found = await findUser('u', 'pw-123456', d);
  assert.is(found !== 'busy' && found?.name, 'u');
  assert.is(await findUser('u', 'nope', d), undefined);
  assert.is(await findUser('ghost', 'pw-123456', d), undefined);
});

test('passwords :: at most two scrypt checks at once; a password checked lately is not hashed again', async () => {
  const d = await db((h) => `Users:\n  u:\n    Password: "${h}"\n`);
  // Two wrong guesses hold both checks; a third stranger is turned away at once instead of queueing CPU.
  const flood = [findUser('u', 'guess-1', d), findUser('ghost', 'guess-2', d)];
  assert.is(await findUser('u', 'guess-3', d), 'busy');
  assert.equal(await Promise.all(flood), [undefined, undefined]);
  const first = await findUser('u', 'pw-123456', d);
  assert.is(first !== 'busy' && first?.name, 'u');
  // Remembered: with both checks held again, the same password still passes, without a check of its own.
  const held = [findUser('u', 'guess-4', d), findUser('u', 'guess-5', d)];
  const again = await findUser('u', 'pw-123456', d);
  assert.is(again !== 'busy' && again?.name, 'u');
  assert.is(await findUser('u', 'pw-1234567', d), 'busy', 'only that password is remembered');
  await Promise.all(held);
});

test('permissions :: every name of the interface, exactly', () => {
  const names: Permission[] = [
    'status.read',
    'logs.read',
    'control.restart',
    'control.update',
    'control.stop',
    'control.rollback',
    'hold',
    'console.send',
    'files.read',
    'backups.read',
    'backups.create',
    'backups.restore',
    'users.manage',
  ];
  assert.equal([...PERMISSIONS], names);
});

test.run();
