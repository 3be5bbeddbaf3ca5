/**
 * Users and keys on the real daemon (README "Users and rights"): each guard of the instance routes, the audit line's
 * user, and the users file's reload that keeps the last good one in force.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { newApiKey } from '../../src/auth/api-keys.ts';
import { daemonSuite } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fastHash } from '../auth/_support/hash.ts';
import {
  accountsConfig,
  afterUsersRead,
  basicAuth,
  instancesUp,
  send,
  TOKENS,
  writeUsers,
} from './_support/accounts.ts';

const PASSWORD = 'moderator-pw-1';
const live = newApiKey();
const expired = newApiKey();

async function usersYaml(opts: { withMo?: boolean } = {}): Promise<string> {
  const h = await fastHash(PASSWORD);
  return [
    'Users:',
    ...(opts.withMo === false ? [] : ['  mo:', `    Password: "${h}"`, '    Roles: [moderator@a]']),
    '  ops:',
    `    Password: "${h}"`,
    '    Roles: [operator]',
    'Keys:',
    `  ${live.id}:`,
    '    User: mo',
    `    Hash: "${live.hash}"`,
    `  ${expired.id}:`,
    '    User: ops',
    `    Hash: "${expired.hash}"`,
    '    Expires: "2020-01-01T00:00:00Z"',
    '',
  ].join('\n');
}

const test = daemonSuite('e2e :: accounts and keys on the instance routes', {
  webhook: true,
  config: async (ctx) => {
    await writeFile(join(ctx.dir, 'users.yml'), await usersYaml(), { mode: 0o600 });
    return accountsConfig('', ctx.hook!.url);
  },
  before: (ctx) => instancesUp(ctx.daemon!),
});

const mo = basicAuth('mo', PASSWORD);
const bearer = (key: string) => `Bearer ${key}`;

test('accounts :: a moderator of a may restart and hold a, and nothing on b (403 naming the right)', async ({
  daemon,
}) => {
  const d = daemon!;
  assert.is((await send(d, 'GET', '/instances/a/status', mo)).status, 200);
  assert.is((await send(d, 'POST', '/instances/a/hold', mo)).status, 200);
  const onB = await send(d, 'GET', '/instances/b/status', mo);
  assert.is(onB.status, 403, 'a grant on a used on b');
  assert.equal(JSON.parse(onB.body).permission, 'status.read');
  const stop = await send(d, 'POST', '/instances/a/stop', mo);
  assert.is(stop.status, 403, 'a right the role lacks');
  assert.equal(JSON.parse(stop.body), { error: 'mo may not control.stop on a', permission: 'control.stop' });
});

test('accounts :: a rollback that puts data back needs backups.restore too, on both paths', async ({ daemon }) => {
  const d = daemon!;
  // An operator rolls builds back but may not restore data (backups.restore is admin's).
  const headers = { authorization: basicAuth('ops', PASSWORD), 'x-watchdog-dashboard': '1' };
  const post = async (path: string) => {
    const res = await fetch(`${d.url}${path}`, { method: 'POST', headers });
    return { status: res.status, body: await res.text() };
  };
  for (const path of ['/instances/a/rollback', '/api/instances/a/rollback']) {
    for (const withData of ['true', '1', '']) {
      const r = await post(`${path}?withData=${withData}`);
      assert.is(r.status, 403, `${path}?withData=${withData}: ${r.body}`);
      assert.is((JSON.parse(r.body) as { permission: string }).permission, 'backups.restore');
    }
    // Without the data it is a rollback like any: past the rights (here 409, there is no previous build).
    const plain = await post(`${path}?withData=false`);
    assert.ok(![401, 403].includes(plain.status), `${path}: ${plain.status} ${plain.body}`);
  }
});

test('accounts :: an unknown user or a wrong password is 401 with the Basic challenge', async ({ daemon }) => {
  const d = daemon!;
  for (const auth of [basicAuth('mo', 'wrong-password'), basicAuth('nobody', PASSWORD)]) {
    const res = await fetch(`${d.url}/instances/a/status`, { headers: { authorization: auth } });
    assert.is(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic/);
    await res.arrayBuffer();
  }
});

test('accounts :: the ApiToken of a is refused on b exactly as without users', async ({ daemon }) => {
  const d = daemon!;
  const res = await send(d, 'GET', '/instances/b/status', basicAuth('a', TOKENS.a));
  assert.equal([res.status, JSON.parse(res.body)], [403, { error: 'user does not match the instance key' }]);
  assert.is((await send(d, 'GET', '/instances/a/status', basicAuth('a', TOKENS.a))).status, 200);
});

test('accounts :: a key holds its user’s rights; an expired or unknown key is 401', async ({ daemon }) => {
  const d = daemon!;
  assert.is((await send(d, 'GET', '/instances/a/status', bearer(live.key))).status, 200);
  const onB = await send(d, 'GET', '/instances/b/status', bearer(live.key));
  assert.equal([onB.status, JSON.parse(onB.body).permission], [403, 'status.read']);
  assert.is((await send(d, 'GET', '/instances/a/status', bearer(expired.key))).status, 401, 'past its expiry');
  assert.is((await send(d, 'GET', '/instances/a/status', bearer(newApiKey().key))).status, 401, 'unknown');
});

test('accounts :: the audit line names the user, the key, or the instance of an ApiToken', async ({ daemon }) => {
  const d = daemon!;
  await send(d, 'POST', '/instances/a/hold', mo);
  await send(d, 'POST', '/instances/a/hold', bearer(live.key));
  await send(d, 'POST', '/instances/a/hold', basicAuth('a', TOKENS.a));
  const audit = join(d.dir, 'logs', 'audit.log');
  const users = await waitFor('three hold lines in the audit log', async () => {
    const lines = (await readFile(audit, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const holds = lines.filter((l) => l.action === 'hold' && l.result === 'accepted').map((l) => l.user);
    return holds.length >= 3 ? holds : undefined;
  });
  assert.ok(users.includes('mo'), JSON.stringify(users));
  assert.ok(users.includes(`key:${live.id}`), JSON.stringify(users));
  assert.ok(users.includes('a'), JSON.stringify(users));
});

test('accounts :: the chat notice of a user’s hold names the user, on the instance route and the dashboard’s', async ({
  daemon,
  hook,
}) => {
  const d = daemon!;
  const ops = basicAuth('ops', PASSWORD);
  const notice = (from: number) =>
    waitFor('the hold notice of b', () =>
      hook!.messages.slice(from).find((m) => /^Server `b` is on hold/.test(m.content)),
    );
  let from = hook!.messages.length;
  assert.is((await send(d, 'POST', '/instances/b/hold?minutes=5', ops)).status, 200);
  assert.match((await notice(from)).content, /\(held by ops\)/);
  assert.is((await send(d, 'POST', '/instances/b/release', ops)).status, 200);
  from = hook!.messages.length;
  const res = await fetch(`${d.url}/api/instances/b/hold?minutes=5`, {
    method: 'POST',
    headers: { authorization: ops, 'x-watchdog-dashboard': '1' },
  });
  assert.is(res.status, 200, await res.text());
  assert.match((await notice(from)).content, /\(held from the dashboard by ops\)/);
  assert.is((await send(d, 'POST', '/instances/b/release', ops)).status, 200);
});

test('accounts :: the chat notice of an update a user asked for names the user', async ({ daemon, hook }) => {
  const d = daemon!;
  const from = hook!.messages.length;
  assert.is((await send(d, 'POST', '/instances/b/update', basicAuth('ops', PASSWORD))).status, 200);
  const done = await waitFor('the update notice of b', () =>
    hook!.messages.slice(from).find((m) => /^Server `b` was updated/.test(m.content)),
  );
  assert.match(done.content, /^Server `b` was updated to revision \d+ \(requested by ops from 127\.0\.0\.1\)\.$/);
});

test('accounts :: a broken or removed users file keeps the last good one in force', async ({ daemon }) => {
  const d = daemon!;
  await writeUsers(d, 'Users:\n  mo:\n    Password: plain-text-password\n');
  assert.match(d.log(), /Users\.mo\.Password: expected a scrypt hash/);
  assert.is((await send(d, 'GET', '/instances/a/status', mo)).status, 200, 'the last good file still holds');
  await afterUsersRead(d, () => rm(join(d.dir, 'users.yml')));
  assert.match(d.log(), /users\.yml is gone; its last good version stays in force/);
  assert.is((await send(d, 'GET', '/instances/a/status', mo)).status, 200, 'still, with the file gone');
});

test('accounts :: a key of a removed user is 401', async ({ daemon }) => {
  const d = daemon!;
  await writeUsers(d, await usersYaml());
  assert.is((await send(d, 'GET', '/instances/a/status', bearer(live.key))).status, 200);
  await writeUsers(d, await usersYaml({ withMo: false }));
  assert.is((await send(d, 'GET', '/instances/a/status', bearer(live.key))).status, 401);
  assert.is((await send(d, 'GET', '/instances/a/status', mo)).status, 401, 'the user is gone too');
});

test.run();
