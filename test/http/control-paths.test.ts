/**
 * Both control paths carry a request out through one function (src/http/control.ts): `POST /instances/:key/<verb>`
 * and the dashboard's `POST /api/instances/:key/<verb>` give the same status and error text, call the instance the
 * same way and audit the same; they differ in how they authenticate, in who the audit names, and in the body of an
 * accepted answer (empty, as the real watchdog's, against the dashboard's JSON). The real daemon in every state:
 * test/e2e/control-paths.test.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseUsers } from '../../src/auth/users-file.ts';
import { createBus } from '../../src/bus.ts';
import { createApp } from '../../src/http/app.ts';
import { CONTROL_VERBS } from '../../src/http/control.ts';
import { fastHash } from '../auth/_support/hash.ts';
import {
  basic,
  fromLoopback,
  harness,
  type MemoryInstance,
  memoryInstance,
  memoryRegistry,
  recordingLogger,
} from './_support/app.ts';
import { LISTING } from './_support/backups.ts';

const test = suite('http control paths :: one answer');

/** A pair of instances alike, one for each path, refusing `refused` verbs with a reason; holds are recorded. */
function pair(refused: Record<string, string> = {}): { api: MemoryInstance; ui: MemoryInstance } {
  const make = (key: string) => {
    const inst = memoryInstance(key, { apiToken: 'tok' });
    let held = false;
    inst.refusal = (action) => refused[action] ?? null;
    inst.hold = (minutes, reason) => {
      held = true;
      inst.calls.push(`hold:${minutes}:${reason}`);
      return null;
    };
    inst.release = () => {
      const was = held;
      held = false;
      return was;
    };
    return inst;
  };
  return { api: make('a'), ui: make('b') };
}

async function answer(res: Response): Promise<string> {
  const text = await res.text();
  return res.status === 200 ? '200' : `${res.status} ${(JSON.parse(text) as { error: string }).error}`;
}

/** `verb` with `query` through both paths: their answers, as `status error`. */
async function both(h: ReturnType<typeof harness>, verb: string, query = ''): Promise<[string, string]> {
  // From the loopback, as the dashboard with no Admin configured (and the ApiToken path does not mind).
  const app = fromLoopback(h.app);
  const api = await app.request(`/instances/a/${verb}${query}`, {
    method: 'POST',
    headers: { authorization: basic('a', 'tok') },
  });
  const ui = await app.request(`/api/instances/b/${verb}${query}`, {
    method: 'POST',
    headers: { 'x-watchdog-dashboard': '1' },
  });
  return [await answer(api), await answer(ui)];
}

test('control paths :: a refusal the instance gives is the same 409 on both', async () => {
  const { api, ui } = pair({ rollback: 'an update is being installed; roll back once it is done' });
  const h = harness(memoryRegistry(api, ui));
  for (const verb of CONTROL_VERBS) {
    const [a, b] = await both(h, verb);
    assert.is(b, a, verb);
  }
  assert.equal(await both(h, 'rollback'), [
    '409 an update is being installed; roll back once it is done',
    '409 an update is being installed; roll back once it is done',
  ]);
  assert.equal(
    ui.calls.filter((c) => c.startsWith('control:')),
    api.calls.filter((c) => c.startsWith('control:')),
  );
  assert.not.ok(api.calls.includes('control:rollback'), 'a refused verb is not sent');
});

test('control paths :: query parameters are read alike', async () => {
  const { api, ui } = pair();
  const h = harness(memoryRegistry(api, ui));
  for (const [verb, query] of [
    ['restart', '?when=Soon'],
    ['stop', '?when=Now'],
    ['hold', '?minutes=-1'],
    ['hold', '?minutes=5&reason=event'],
    ['release', ''],
    ['release', ''],
  ] as const) {
    const [a, b] = await both(h, verb, query);
    assert.is(b, a, `${verb}${query}`);
  }
  assert.equal(await both(h, 'restart', '?when=Soon'), [
    '400 when must be one of Now, RoundEnd, Empty, not "Soon"',
    '400 when must be one of Now, RoundEnd, Empty, not "Soon"',
  ]);
  assert.equal(await both(h, 'release'), [
    '409 nothing is held for this instance',
    '409 nothing is held for this instance',
  ]);
  assert.ok(ui.calls.includes('hold:5:event'), 'the dashboard path reads minutes and reason');
});

test('control paths :: rollback withData and restore need their snapshot, on both alike', async () => {
  const { api, ui } = pair();
  const h = harness(memoryRegistry(api, ui));
  const asks = [
    ['rollback', '?withData=true'],
    ['rollback', '?withData=maybe'],
    ['restore', ''],
    ['restore', '?backup=snap-1'],
    ['restart', '?withData=1'],
    ['stop', '?backup=snap-1'],
  ] as const;
  const noBackups = [];
  for (const [verb, query] of asks) noBackups.push(await both(h, `${verb}`, query));
  assert.equal(noBackups, [
    ['409 this daemon keeps no backups for the instance', '409 this daemon keeps no backups for the instance'],
    ['400 withData must be true or false, not "maybe"', '400 withData must be true or false, not "maybe"'],
    [
      '400 restore needs the backup to put back: ?backup=<id> (watchdog backups lists them)',
      '400 restore needs the backup to put back: ?backup=<id> (watchdog backups lists them)',
    ],
    ['409 this daemon keeps no backups for the instance', '409 this daemon keeps no backups for the instance'],
    ['400 withData applies to rollback only, not restart', '400 withData applies to rollback only, not restart'],
    ['400 backup applies to restore only, not stop', '400 backup applies to restore only, not stop'],
  ]);
  // With snapshots: the one a rollback puts back, and snap-1 only.
  let matching: string | null = null;
  for (const inst of [api, ui])
    inst.backups = {
      list: async () => [],
      take: async () => {
        throw new Error('not here');
      },
      forRollback: async () => (matching === null ? null : { ...LISTING, id: matching, forRollback: true }),
      has: async (id) => id === 'snap-1',
    };
  assert.equal(await both(h, 'rollback', '?withData=true'), [
    '409 no snapshot was taken before the installed build was installed; roll back without withData to keep the current data',
    '409 no snapshot was taken before the installed build was installed; roll back without withData to keep the current data',
  ]);
  matching = 'snap-0';
  assert.equal(await both(h, 'rollback', '?withData=true'), ['200', '200']);
  assert.equal(await both(h, 'restore', '?backup=snap-2'), [
    '409 there is no backup snap-2 of a (watchdog backups lists them)',
    '409 there is no backup snap-2 of b (watchdog backups lists them)',
  ]);
  assert.equal(await both(h, 'restore', '?backup=snap-1'), ['200', '200']);
  assert.equal(api.calls, ['control:rollback:withData', 'control:restore:backup=snap-1']);
  assert.equal(ui.calls, api.calls);
});

test('control paths :: both audit alike, naming their own requester', async () => {
  const { api, ui } = pair({ update: 'no update provider: UpdateType is not set for this instance' });
  const h = harness(memoryRegistry(api, ui));
  await both(h, 'update');
  await both(h, 'restart');
  const shape = (e: (typeof h.controls)[number]) => [e.action, e.status, e.result, e.reason ?? null];
  const byKey = (key: string) => h.controls.filter((e) => e.key === key);
  assert.equal(byKey('b').map(shape), byKey('a').map(shape));
  assert.equal(byKey('a').map(shape), [
    ['update', 409, 'refused', 'no update provider: UpdateType is not set for this instance'],
    ['restart', 200, 'accepted', null],
  ]);
  assert.ok(
    byKey('a').every((e) => e.user === 'a'),
    'the ApiToken path names the key',
  );
  assert.ok(
    byKey('b').every((e) => e.user === undefined),
    'the dashboard path names the admin (none on the loopback)',
  );
});

test('control paths :: an instance without ApiToken: no control on either path without accounts; by rights with them', async () => {
  const restart = async (app: ReturnType<typeof fromLoopback>, auth: string) => {
    const headers = { authorization: auth };
    const api = await app.request('/instances/a/restart', { method: 'POST', headers });
    const ui = await app.request('/api/instances/a/restart', {
      method: 'POST',
      headers: { ...headers, 'x-watchdog-dashboard': '1' },
    });
    return [api.status, ui.status];
  };
  const tokenless = memoryInstance('a', {});
  const h = harness(memoryRegistry(tokenless));
  assert.equal(await restart(fromLoopback(h.app), basic('a', 'anything')), [401, 403]);

  const parsed = parseUsers(
    ['Users:', '  mo:', `    Password: "${await fastHash('pw-123456')}"`, '    Roles: [moderator@a]'].join('\n'),
    'users.yml',
  );
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const withUsers = memoryInstance('a', {});
  const app = fromLoopback(
    createApp({
      registry: memoryRegistry(withUsers),
      bus: createBus(),
      log: recordingLogger(),
      version: '9.9.9-test',
      users: () => parsed.db,
    }),
  );
  assert.equal(await restart(app, basic('mo', 'pw-123456')), [200, 200]);
  assert.equal(withUsers.calls, ['control:restart', 'control:restart']);
});

test.run();
