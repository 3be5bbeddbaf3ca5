/**
 * Scope on the real daemon: a right on one instance never reaches another instance's files (not by the route, dot
 * segments, encoded separators or a link), never stands for every instance (`*`), and a key's unscoped
 * Permissions never exceed its user's rights. Nothing can be named like a pattern: no instance, no grant.
 */
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { daemonSuite, type RunningDaemon } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { basicAuth } from './_support/accounts.ts';
import {
  CASE_KEYS,
  caseUsers,
  logIn,
  openEvents,
  PASSWORD,
  rawRequest,
  replaceUsers,
  rightsConfig,
  rightsReady,
  secretOf,
} from './_support/rights.ts';

const test = daemonSuite<{ users: string }>('e2e :: rights are scoped to their instance', {
  ctx: { users: '' },
  config: () => rightsConfig(),
  before: async (ctx) => {
    const d = ctx.daemon!;
    await rightsReady(d);
    ctx.users = caseUsers(await fastHash(PASSWORD));
    assert.ok(await replaceUsers(d, ctx.users), 'the cases’ users file');
    // A link in a's shared folder to b's: resolved, it is outside a's folder.
    await symlink(join(d.dir, 'instances', 'b', 'dumps'), join(d.dir, 'instances', 'a', 'dumps', 'to-b'));
  },
});

const as = (user: string) => ({ authorization: basicAuth(user, PASSWORD) });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const DASH = { 'x-watchdog-dashboard': '1' };

/** The status and body of `path`, and whether the body holds another instance's secret. */
async function get(d: RunningDaemon, path: string, headers: Record<string, string>) {
  const res = await rawRequest(d, 'GET', path, headers);
  return { ...res, leaks: res.body.includes(secretOf('b')) || res.body.includes(secretOf('c')) };
}

test('files :: files.read@a reads a’s shared files and never b’s, by the route or by path tricks', async ({
  daemon,
}) => {
  const d = daemon!;
  const session = await logIn(d, 'fr', PASSWORD);
  const ways = [as('fr'), bearer(CASE_KEYS.filesOfA.key), { cookie: `watchdog_session=${session}` }];
  for (const [i, headers] of ways.entries()) {
    const prefix = i === 2 ? '/api' : '';
    const own = await get(d, `${prefix}/instances/a/files/dumps/note.txt`, headers);
    assert.equal([own.status, own.body], [200, secretOf('a')], `${i}: a's own file`);
    const other = await get(d, `${prefix}/instances/b/files/dumps/note.txt`, headers);
    assert.equal([other.status, JSON.parse(other.body).permission], [403, 'files.read'], `${i}: b's file`);
  }
  // Each trick and the answer it gets (on the instance route, on the dashboard's): a dot segment is folded by the
  // URL parser before routing, so it lands on b's route (403); an encoded one is refused as a path (400); a key with
  // an encoded slash names no instance (the instance route looks the instance up first: 404; the dashboard asks
  // the right first: 403); a path out of every route is 404; a link out of a's folder is nothing there (404).
  const TRICKS: Array<[string, number, number]> = [
    ['/instances/a/files/../../b/files/dumps/note.txt', 403, 403],
    ['/instances/a/files/%2e%2e/%2e%2e/b/files/dumps/note.txt', 403, 403],
    ['/instances/a/files/dumps/../../../b/dumps/note.txt', 404, 404],
    ['/instances/a/files/..%2F..%2Fb%2Ffiles%2Fdumps%2Fnote.txt', 400, 400],
    ['/instances/a/files/dumps/..%2F..%2F..%2Fb%2Fdumps%2Fnote.txt', 400, 400],
    ['/instances/a/files/dumps%2F..%2F..%2F..%2Fb%2Fdumps%2Fnote.txt', 400, 400],
    ['/instances/a/files/dumps/..%5C..%5C..%5Cb%5Cdumps%5Cnote.txt', 400, 400],
    ['/instances/a/files/dumps/%2e%2e%2f%2e%2e%2f%2e%2e%2fb%2fdumps%2fnote.txt', 400, 400],
    ['/instances/a%2F..%2Fb/files/dumps/note.txt', 404, 403],
    ['/instances/a/files/dumps/to-b/note.txt', 404, 404],
  ];
  for (const [i, headers] of ways.entries())
    for (const [trick, onInstance, onDashboard] of TRICKS) {
      const path = i === 2 ? `/api${trick}` : trick;
      const res = await get(d, path, headers);
      assert.not.ok(res.leaks, `${path} (way ${i}) leaked: ${res.body.slice(0, 200)}`);
      assert.is(res.status, i === 2 ? onDashboard : onInstance, `${path} (way ${i}): ${res.body.slice(0, 200)}`);
    }
});

test('wildcard :: a role on one instance holds there only; on each instance one by one is not on *', async ({
  daemon,
}) => {
  const d = daemon!;
  const mo = as('mo');
  assert.is((await rawRequest(d, 'POST', '/instances/a/hold?minutes=0', mo)).status, 400, 'let in on a');
  for (const key of ['b', 'c']) {
    const res = await rawRequest(d, 'POST', `/instances/${key}/hold?minutes=0`, mo);
    assert.equal([res.status, JSON.parse(res.body).permission], [403, 'hold'], `moderator@a on ${key}`);
  }
  // v3 reads the status of a, b and c, each by its own grant: /metrics wants the right on every instance.
  for (const key of ['a', 'b', 'c'])
    assert.is((await rawRequest(d, 'GET', `/instances/${key}/status`, as('v3'))).status, 200, key);
  const metrics = await rawRequest(d, 'GET', '/metrics', as('v3'));
  assert.equal([metrics.status, JSON.parse(metrics.body).permission], [403, 'status.read']);
  assert.is((await rawRequest(d, 'GET', '/metrics', as('boss'))).status, 200, 'admin without @ holds on *');
});

test('wildcard :: an instance named `*` in a request matches no grant of one instance', async ({ daemon }) => {
  const d = daemon!;
  for (const star of ['*', '%2A', '%2a']) {
    // The dashboard asks the right before it looks the instance up: `*` is no grant of mo's.
    const hold = await rawRequest(d, 'POST', `/api/instances/${star}/hold`, { ...as('mo'), ...DASH });
    assert.equal([hold.status, JSON.parse(hold.body).permission], [403, 'hold'], `dashboard hold of ${star}`);
    const log = await rawRequest(d, 'GET', `/api/instances/${star}/log`, as('mo'));
    assert.equal([log.status, JSON.parse(log.body).permission], [403, 'logs.read'], `dashboard log of ${star}`);
    // An admin everywhere gets in, and finds no such instance; so does anyone on an instance route, which looks
    // the instance up first (a 404 there tells no more than /health does).
    const boss = await rawRequest(d, 'POST', `/api/instances/${star}/hold`, { ...as('boss'), ...DASH });
    assert.is(boss.status, 404, `admin's hold of ${star}`);
    assert.is((await rawRequest(d, 'GET', `/instances/${star}/status`, as('mo'))).status, 404, star);
  }
});

test('wildcard :: no instance and no grant can be named like a pattern', async ({ daemon }) => {
  const dir = await mkdtemp(join(tmpdir(), 'wd-star-'));
  try {
    for (const key of ['"*"', '"a*"', '"*a"', '"a/b"']) {
      const yaml = `Servers:\n  Instances:\n    ${key}:\n      ApiPort: 1234\n      ApiToken: tok\n`;
      await writeFile(join(dir, 'appsettings.yml'), yaml);
      const r = await loadConfig({ cwd: dir, env: {} });
      assert.not.ok(r.ok, `an instance named ${key}`);
      assert.match(r.ok ? '' : r.problems.join('\n'), 'expected an instance id', key);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const d = daemon!;
  const hash = await fastHash(PASSWORD);
  for (const grant of ['viewer@a*', 'viewer@*a', 'viewer@**', 'viewer@', 'viewer@a/b']) {
    const text = `Users:\n  wild:\n    Password: "${hash}"\n    Roles: ["${grant}"]\n`;
    assert.not.ok(await replaceUsers(d, text), `a users file granting ${grant} is refused`);
    assert.is((await rawRequest(d, 'GET', '/instances/a/status', as('wild'))).status, 401, `no user wild (${grant})`);
  }
  for (const perm of ['*', '*@a', 'status.read@a*']) {
    const text = `Users:\n  wild:\n    Password: "${hash}"\n    Roles: [viewer]\nKeys:\n  ${CASE_KEYS.live.id}:\n    User: wild\n    Hash: "${CASE_KEYS.live.hash}"\n    Permissions: ["${perm}"]\n`;
    assert.not.ok(await replaceUsers(d, text), `a key holding ${perm} is refused`);
  }
});

test('wildcard :: a key’s unscoped Permissions never exceed its user’s rights', async ({ daemon, users }) => {
  const d = daemon!;
  // The last test left a refused file: the cases' one in force again.
  assert.ok(await replaceUsers(d, users));
  const key = bearer(CASE_KEYS.wide.key);
  assert.is((await rawRequest(d, 'GET', '/instances/a/status', key)).status, 200, 'both hold status.read on a');
  const refusals: Array<[string, string, string]> = [
    ['POST', '/instances/a/stop?when=Now', 'control.stop'],
    ['GET', '/instances/a/files/dumps/note.txt', 'files.read'],
    ['GET', '/instances/b/status', 'status.read'],
    ['GET', '/api/instances/b/files/dumps/note.txt', 'files.read'],
    ['GET', '/metrics', 'status.read'],
  ];
  for (const [method, path, permission] of refusals) {
    const res = await rawRequest(d, method, path, { ...key, ...DASH });
    assert.equal([res.status, JSON.parse(res.body).permission], [403, permission], `${method} ${path}`);
  }
});

/** The instance keys an event names: its own, and those of a `hello`'s instances and recent events. */
function keysOf(e: { event: string; data: unknown }): string[] {
  const data = e.data as {
    key?: string;
    instances?: Array<{ key: string }>;
    recent?: Array<{ event: { key: string } }>;
  };
  if (e.event !== 'hello') return data.key === undefined ? [] : [data.key];
  return [...(data.instances ?? []).map((i) => i.key), ...(data.recent ?? []).map((r) => r.event.key)];
}

test('bulk :: no action spans instances; each list shows a moderator of a only a', async ({ daemon }) => {
  const d = daemon!;
  const [mo, boss] = [as('mo'), as('boss')];
  // Events on b and c before anyone looks: the recent list holds them.
  for (const key of ['b', 'c']) await rawRequest(d, 'POST', `/instances/${key}/hold?minutes=0`, boss);
  const keys = async (headers: Record<string, string>) =>
    (JSON.parse((await rawRequest(d, 'GET', '/api/instances', headers)).body) as Array<{ key: string }>).map(
      (s) => s.key,
    );
  assert.equal(await keys(mo), ['a']);
  assert.equal(await keys(boss), ['a', 'b', 'c']);
  const me = JSON.parse((await rawRequest(d, 'GET', '/api/me', mo)).body) as { permissions: Record<string, string[]> };
  assert.equal(me.permissions, { a: ['status.read', 'logs.read', 'control.restart', 'hold', 'console.send'] });
  const cards = async (headers: Record<string, string>) =>
    [...(await rawRequest(d, 'GET', '/', headers)).body.matchAll(/<article class="card" data-key="([^"]+)"/g)].map(
      (m) => m[1],
    );
  assert.equal(await cards(mo), ['a']);
  assert.equal(await cards(boss), ['a', 'b', 'c']);
  assert.is((await rawRequest(d, 'GET', '/metrics', mo)).status, 403, 'every instance’s figures');

  const mine = await openEvents(d, { cookie: `watchdog_session=${await logIn(d, 'mo', PASSWORD)}` });
  const all = await openEvents(d, boss);
  try {
    const hello = await waitFor('mo’s hello', () => mine.seen.find((e) => e.event === 'hello'));
    assert.equal([...new Set(keysOf(hello))], ['a']);
    const bossHello = await waitFor('boss’s hello', () => all.seen.find((e) => e.event === 'hello'));
    assert.ok(keysOf(bossHello).includes('b'), 'the recent list holds b’s events');
    // b's event first, then a's: once a's has come, b's would have come before it.
    await rawRequest(d, 'POST', '/instances/b/hold?minutes=0', boss);
    await rawRequest(d, 'POST', '/instances/a/hold?minutes=0', boss);
    await waitFor('b’s event on boss’s stream', () =>
      all.seen.some((e) => keysOf(e).includes('b') && e.event !== 'hello'),
    );
    await waitFor('a’s event on mo’s stream', () => mine.seen.some((e) => e.event === 'instance:control'));
    assert.equal([...new Set(mine.seen.flatMap(keysOf))], ['a']);
  } finally {
    mine.close();
    all.close();
  }
});

test.run();
