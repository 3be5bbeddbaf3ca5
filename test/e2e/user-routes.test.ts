/**
 * Managing users over HTTP on the real daemon (README "Users and rights"): the routes behind users.manage, and the
 * grant rule's refusals, each a 403 naming the permission, with the users file left as it was.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { newApiKey } from '../../src/auth/api-keys.ts';
import type { RunningDaemon } from '../_support/daemon.ts';
import { daemonSuite } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { accountsConfig, basicAuth, instancesUp, send } from './_support/accounts.ts';

const PASSWORD = 'manager-pw-123';
const narrowKey = newApiKey();

/** Who holds what: `umgr` manages users everywhere but holds only status.read besides. */
const USERS: Record<string, string> = {
  boss: '[admin]',
  amgr: '[admin@a]',
  abmgr: '[admin@a, admin@b]',
  umgr: '[usermgr]',
  mo: '[moderator@a]',
  vie: '[viewer]',
};

const test = daemonSuite('e2e :: users managed over HTTP', {
  config: async (ctx) => {
    const h = await fastHash(PASSWORD);
    const lines = ['Roles:', '  usermgr: [users.manage, status.read]', 'Users:'];
    for (const [name, roles] of Object.entries(USERS))
      lines.push(`  ${name}:`, `    Password: "${h}"`, `    Roles: ${roles}`);
    lines.push('Keys:', `  ${narrowKey.id}:`, '    User: amgr', `    Hash: "${narrowKey.hash}"`);
    lines.push('    Permissions: [status.read@a]', '');
    await writeFile(join(ctx.dir, 'users.yml'), lines.join('\n'), { mode: 0o600 });
    return accountsConfig();
  },
  before: (ctx) => instancesUp(ctx.daemon!),
});

const as = (user: string) => basicAuth(user, PASSWORD);
const usersFile = (d: RunningDaemon) => readFile(join(d.dir, 'users.yml'), 'utf8');

/** Asserts a 403 naming `permission`, and that the users file was not touched. */
async function refused(
  d: RunningDaemon,
  [method, path, auth, body]: [string, string, string, unknown?],
  permission: string,
  why: RegExp,
) {
  const before = await usersFile(d);
  const res = await send(d, method, path, auth, body);
  assert.is(res.status, 403, `${method} ${path}: ${res.body}`);
  const answer = JSON.parse(res.body) as { error: string; permission: string };
  assert.is(answer.permission, permission, answer.error);
  assert.match(answer.error, why);
  assert.is(await usersFile(d), before, 'the users file is as it was');
}

test('users :: GET /api/users lists names and roles, never a hash; only with users.manage', async ({ daemon }) => {
  const d = daemon!;
  const res = await send(d, 'GET', '/api/users', as('boss'));
  assert.is(res.status, 200, res.body);
  const list = JSON.parse(res.body) as Array<{ name: string; roles: string[]; totp: boolean; keys: number }>;
  assert.equal(
    list.find((u) => u.name === 'mo'),
    { name: 'mo', roles: ['moderator@a'], totp: false, keys: 0 },
  );
  assert.is(list.find((u) => u.name === 'amgr')?.keys, 1);
  assert.not.match(res.body, /scrypt|sha256/);
  await refused(d, ['GET', '/api/users', as('mo')], 'users.manage', /mo may not users\.manage/);
});

test('users :: a key without users.manage cannot, though its user can', async ({ daemon }) => {
  const d = daemon!;
  const key = `Bearer ${narrowKey.key}`;
  assert.is((await send(d, 'GET', '/api/users', as('amgr'))).status, 200);
  await refused(d, ['GET', '/api/users', key], 'users.manage', /may not users\.manage/);
  const body = { name: 'by-key', password: 'by-key-pw-1', roles: ['viewer@a'] };
  await refused(d, ['POST', '/api/users', key, body], 'users.manage', /may not users\.manage/);
});

test('users :: boss creates a user; it is in force at the answer, and the audit names boss', async ({ daemon }) => {
  const d = daemon!;
  const res = await send(d, 'POST', '/api/users', as('boss'), {
    name: 'newbie',
    password: 'newbie-pw-1',
    roles: ['viewer@b'],
  });
  assert.is(res.status, 201, res.body);
  assert.equal(JSON.parse(res.body), { name: 'newbie', roles: ['viewer@b'] });
  assert.is((await send(d, 'GET', '/instances/b/status', basicAuth('newbie', 'newbie-pw-1'))).status, 200);
  assert.is((await send(d, 'GET', '/instances/a/status', basicAuth('newbie', 'newbie-pw-1'))).status, 403);
  assert.is((await stat(join(d.dir, 'users.yml'))).mode & 0o777, 0o600);
  assert.not.match(await usersFile(d), /newbie-pw-1/);
  const again = await send(d, 'POST', '/api/users', as('boss'), { name: 'newbie', password: 'x-123456789', roles: [] });
  assert.is(again.status, 409);
  const line = await waitFor('the audit line of the creation', async () => {
    const text = await readFile(join(d.dir, 'logs', 'audit.log'), 'utf8').catch(() => '');
    return text.split('\n').find((l) => l.includes('"action":"user.create"'));
  });
  const audit = JSON.parse(line) as Record<string, unknown>;
  assert.equal([audit.user, audit.name, audit.roles], ['boss', 'newbie', ['viewer@b']]);
  assert.not.match(line, /newbie-pw-1/);
});

test('users :: granting a right one does not hold is refused, naming it', async ({ daemon }) => {
  const d = daemon!;
  const body = { name: 'x1', password: 'x1-password', roles: ['moderator@a'] };
  await refused(d, ['POST', '/api/users', as('umgr'), body], 'logs.read', /umgr may not grant logs\.read on a/);
});

test('users :: granting on * needs a grant on *, not one on each instance there is', async ({ daemon }) => {
  const d = daemon!;
  const body = (name: string) => ({ name, password: `${name}-password`, roles: ['viewer'] });
  await refused(d, ['POST', '/api/users', as('amgr'), body('x2')], 'status.read', /on every instance \(\*\)/);
  await refused(d, ['POST', '/api/users', as('abmgr'), body('x3')], 'status.read', /on every instance \(\*\)/);
  const onA = await send(d, 'POST', '/api/users', as('amgr'), { ...body('x4'), roles: ['viewer@a'] });
  assert.is(onA.status, 201, 'what it holds, where it manages users');
});

test('users :: no one changes their own roles, raising or not, nor removes themselves', async ({ daemon }) => {
  const d = daemon!;
  const own = /may not change its own roles or remove itself/;
  await refused(d, ['PUT', '/api/users/amgr/roles', as('amgr'), { roles: ['admin'] }], 'users.manage', own);
  await refused(
    d,
    ['PUT', '/api/users/amgr/roles', as('amgr'), { roles: ['admin@a', 'viewer@a'] }],
    'users.manage',
    own,
  );
  await refused(d, ['PUT', '/api/users/boss/roles', as('boss'), { roles: ['admin'] }], 'users.manage', own);
  await refused(d, ['DELETE', '/api/users/boss', as('boss')], 'users.manage', own);
});

test('users :: a user holding more than the actor can be neither changed nor removed', async ({ daemon }) => {
  const d = daemon!;
  const more = /may not change (boss|vie), who holds status\.read on every instance/;
  await refused(d, ['DELETE', '/api/users/boss', as('amgr')], 'status.read', more);
  await refused(d, ['PUT', '/api/users/vie/roles', as('amgr'), { roles: ['viewer@a'] }], 'status.read', more);
  await refused(d, ['DELETE', '/api/users/vie', as('abmgr')], 'status.read', more);
  // One it covers: amgr holds all of mo's rights (moderator@a).
  const raised = await send(d, 'PUT', '/api/users/mo/roles', as('amgr'), { roles: ['operator@a'] });
  assert.equal([raised.status, JSON.parse(raised.body)], [200, { name: 'mo', roles: ['operator@a'] }]);
  assert.is((await send(d, 'POST', '/instances/a/stop', as('mo'))).status !== 403, true, 'operator@a now');
  const gone = await send(d, 'DELETE', '/api/users/mo', as('amgr'));
  assert.equal([gone.status, JSON.parse(gone.body)], [200, { name: 'mo', removed: true, revokedKeys: 0 }]);
  assert.is((await send(d, 'GET', '/instances/a/status', as('mo'))).status, 401, 'removed, at the answer');
});

test('users :: bad bodies and unknown names are 400 and 404, to a client with users.manage only', async ({
  daemon,
}) => {
  const d = daemon!;
  const boss = as('boss');
  assert.is((await send(d, 'POST', '/api/users', boss, { name: 'y', password: 'short', roles: [] })).status, 400);
  const unknownRole = await send(d, 'POST', '/api/users', boss, {
    name: 'y',
    password: 'long-enough',
    roles: ['chief'],
  });
  assert.is(unknownRole.status, 400);
  assert.match(JSON.parse(unknownRole.body).error, /Users\.y\.Roles\[0\]: expected a role/);
  assert.is((await send(d, 'PUT', '/api/users/nobody/roles', boss, { roles: [] })).status, 404);
  assert.is((await send(d, 'DELETE', '/api/users/nobody', boss)).status, 404);
  assert.is((await send(d, 'PATCH', '/api/users/vie', boss)).status, 405);
  // Anyone else learns nothing of which users exist: 403 before the 404 or the 409.
  const asked: Array<[string, string, unknown?]> = [
    ['DELETE', '/api/users/nobody'],
    ['PUT', '/api/users/nobody/roles', { roles: [] }],
    ['POST', '/api/users', { name: 'boss', password: 'long-enough', roles: [] }],
  ];
  for (const [method, path, body] of asked)
    await refused(d, [method, path, as('vie'), body], 'users.manage', /vie may not users\.manage/);
});

test.run();
