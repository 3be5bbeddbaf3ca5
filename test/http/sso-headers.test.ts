/**
 * Single sign-on from a reverse proxy (`Users.TrustedHeaders`): the user and groups it names are believed from a
 * proxy in TrustedProxies only, the groups' rights come from the users file's `Groups:`, and every right is asked of
 * can() as for any account.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseUsers, type UsersDb } from '../../src/auth/users-file.ts';
import { createBus } from '../../src/bus.ts';
import { createApp } from '../../src/http/app.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

async function usersDb(): Promise<UsersDb> {
  const h = await fastHash('pw-123456');
  const parsed = parseUsers(
    [
      'Users:',
      '  ops:',
      `    Password: "${h}"`,
      '    Roles: [operator@b]',
      'Groups:',
      '  mods: [moderator@a]',
      '  watchers: [viewer]',
    ].join('\n'),
    'users.yml',
  );
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.db;
}

async function app(trusted: string[]) {
  const users = await usersDb();
  return fromLoopback(
    createApp({
      registry: memoryRegistry(memoryInstance('a', { apiToken: 't' }), memoryInstance('b', { apiToken: 't' })),
      bus: createBus(),
      log: recordingLogger(),
      version: '9.9.9-test',
      users: () => users,
      trustedProxies: () => trusted,
      trustedHeaders: () => ({ User: 'Remote-User', Groups: 'Remote-Groups' }),
    }),
  );
}

const as = (user: string, groups: string) => ({ headers: { 'remote-user': user, 'remote-groups': groups } });
const post = (user: string, groups: string) => ({
  method: 'POST',
  headers: { ...as(user, groups).headers, 'x-watchdog-dashboard': '1' },
});

const test = suite('http :: single sign-on headers');

test('sso :: from a trusted proxy, the named user holds its groups’ rights, and its own from the users file', async () => {
  const a = await app(['127.0.0.1']);
  const me = await a.request('/api/me', as('alice', 'mods, nobody-knows-this'));
  assert.is(me.status, 200);
  const body = (await me.json()) as { user: string; kind: string; permissions: Record<string, string[]> };
  assert.is(body.user, 'alice');
  assert.is(body.kind, 'sso');
  assert.equal(Object.keys(body.permissions), ['a'], 'a moderator of a sees a alone');
  assert.ok(body.permissions.a!.includes('control.restart'));

  assert.is((await a.request('/api/instances/a/restart', post('alice', 'mods'))).status, 200);
  const onB = await a.request('/api/instances/b/restart', post('alice', 'mods'));
  assert.is(onB.status, 403);
  assert.is(((await onB.json()) as { permission: string }).permission, 'control.restart');
  // ops is in the users file as an operator of b: vouched for, it holds that too.
  assert.is((await a.request('/api/instances/b/stop', post('ops', 'watchers'))).status, 200);
  assert.is((await a.request('/api/instances/a/stop', post('ops', 'watchers'))).status, 403);
});

test('sso :: the same headers from a client that is not a trusted proxy are not believed', async () => {
  const a = await app([]);
  assert.is((await a.request('/api/me', as('alice', 'mods'))).status, 401);
  assert.is((await a.request('/api/instances/a/restart', post('ops', 'mods'))).status, 401);
});

test('sso :: an Authorization header decides alone; an empty user name is no one', async () => {
  const a = await app(['127.0.0.1']);
  const wrong = await a.request('/api/me', {
    headers: { ...as('alice', 'mods').headers, authorization: `Basic ${Buffer.from('ops:wrong').toString('base64')}` },
  });
  assert.is(wrong.status, 401);
  assert.is((await a.request('/api/me', as('  ', 'mods'))).status, 401);
});

test.run();
