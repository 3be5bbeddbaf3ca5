/**
 * The backup routes: `GET`/`POST /instances/:key/backups` (the instance's ApiToken) and the dashboard's
 * `/api/instances/:key/backups` answer alike, a snapshot taken is audited with who asked, and a full disk is 507.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BackupListing } from '../../src/supervisor/status.ts';
import { basic, fromLoopback, harness, memoryInstance, memoryRegistry } from './_support/app.ts';
import { LISTING } from './_support/backups.ts';

const test = suite('http backup routes');

/** An instance `key` whose snapshots are `taken`; `failWith` makes the next take fail with that reason. */
function withBackups(key: string, state: { failWith?: 'space' | 'failed' } = {}) {
  const inst = memoryInstance(key, { apiToken: 'tok' });
  const taken: BackupListing[] = [LISTING];
  inst.backups = {
    list: async () => taken.slice(),
    take: async (by) => {
      if (state.failWith) throw Object.assign(new Error(`disk says no (${by})`), { reason: state.failWith });
      const made = { ...LISTING, id: `made-${taken.length}` };
      taken.unshift(made);
      return made;
    },
    forRollback: async () => null,
    has: async (id) => taken.some((b) => b.id === id),
  };
  return inst;
}

const api = (key: string, method = 'GET') => ({ method, headers: { authorization: basic(key, 'tok') } });
const ui = (method = 'GET') => ({ method, headers: { 'x-watchdog-dashboard': '1' } });

test('backup routes :: both paths list the same snapshots', async () => {
  const h = harness(memoryRegistry(withBackups('a'), withBackups('b')));
  const app = fromLoopback(h.app);
  const one = await app.request('/instances/a/backups', api('a'));
  const two = await app.request('/api/instances/b/backups', ui());
  assert.is(one.status, 200);
  assert.is(two.status, 200);
  assert.equal(await one.json(), [LISTING]);
  assert.equal(await two.json(), [LISTING]);
});

test('backup routes :: a snapshot taken on either path is audited with who asked', async () => {
  const h = harness(memoryRegistry(withBackups('a'), withBackups('b')));
  const app = fromLoopback(h.app);
  const one = await app.request('/instances/a/backups', api('a', 'POST'));
  const two = await app.request('/api/instances/b/backups', ui('POST'));
  assert.equal([one.status, two.status], [200, 200]);
  assert.is(((await one.json()) as BackupListing).id, 'made-1');
  assert.is(((await two.json()) as BackupListing).id, 'made-1');
  assert.equal(
    h.controls.map((e) => [e.key, e.action, e.status, e.user ?? null]),
    [
      ['a', 'backup', 200, 'a'],
      ['b', 'backup', 200, null],
    ],
  );
  const listed = (await (await app.request('/api/instances/b/backups', ui())).json()) as BackupListing[];
  assert.equal(
    listed.map((b) => b.id),
    ['made-1', LISTING.id],
  );
});

test('backup routes :: a full disk is 507, another failure 500, no backups 404, a wrong method 405', async () => {
  const h = harness(
    memoryRegistry(
      withBackups('full', { failWith: 'space' }),
      withBackups('bad', { failWith: 'failed' }),
      memoryInstance('none', { apiToken: 'tok' }),
    ),
  );
  const app = fromLoopback(h.app);
  const full = await app.request('/api/instances/full/backups', ui('POST'));
  assert.is(full.status, 507);
  assert.match(((await full.json()) as { error: string }).error, /disk says no/);
  assert.is((await app.request('/instances/bad/backups', api('bad', 'POST'))).status, 500);
  assert.is((await app.request('/instances/none/backups', api('none'))).status, 404);
  assert.is((await app.request('/api/instances/none/backups', ui('POST'))).status, 404);
  assert.is((await app.request('/api/instances/full/backups', ui('PUT'))).status, 405);
  assert.equal(
    h.controls.map((e) => [e.key, e.status, e.result]),
    [
      ['full', 507, 'refused'],
      ['bad', 500, 'refused'],
      ['none', 404, 'refused'],
    ],
  );
});

test('backup routes :: the dashboard path needs its header, the API path its token', async () => {
  const h = harness(memoryRegistry(withBackups('a')));
  const app = fromLoopback(h.app);
  assert.is((await app.request('/api/instances/a/backups', { method: 'POST' })).status, 403);
  assert.is((await app.request('/instances/a/backups', { method: 'POST' })).status, 401);
  assert.is(h.controls.length, 0, 'nothing was taken');
});

test.run();
