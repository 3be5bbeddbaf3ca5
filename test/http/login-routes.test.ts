import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSessionStore, type SessionSettings } from '../../src/auth/sessions.ts';
import { parseUsers, type UsersDb } from '../../src/auth/users-file.ts';
import { type BusEvents, createBus } from '../../src/bus.ts';
import { createApp } from '../../src/http/app.ts';
import type { HttpDeps } from '../../src/http/deps.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { basic, fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

const PASSWORD = 'pw-123456';
const SESSIONS: SessionSettings = { absoluteMs: 3_600_000, idleMs: 600_000, max: 100 };

async function usersDb(lines: string[]): Promise<UsersDb> {
  const h = await fastHash(PASSWORD);
  const parsed = parseUsers(lines.join('\n').replaceAll('HASH', h), 'users.yml');
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.db;
}

const MO = ['Users:', '  mo:', '    Password: "HASH"', '    Roles: [moderator@a]'];

interface World {
  app: ReturnType<typeof createApp>;
  bus: ReturnType<typeof createBus>;
  logins: BusEvents['daemon:login'][];
  setUsers(db: UsersDb): void;
  setAdmin(password: string | undefined): void;
}

function world(db: UsersDb, more: Partial<HttpDeps> = {}): World {
  let users = db;
  let admin: { username: string; password: string } | undefined = { username: 'root', password: 'admin-pw' };
  const bus = createBus();
  const logins: BusEvents['daemon:login'][] = [];
  bus.on('daemon:login', (e) => logins.push(e));
  const app = createApp({
    registry: memoryRegistry(memoryInstance('a', { apiToken: 't' }), memoryInstance('b', { apiToken: 't' })),
    bus,
    log: recordingLogger(),
    version: '9.9.9-test',
    users: () => users,
    admin: () => admin,
    sessions: createSessionStore(() => SESSIONS),
    ...more,
  });
  return {
    app: fromLoopback(app),
    bus,
    logins,
    setUsers: (next) => (users = next),
    setAdmin: (password) => (admin = password === undefined ? undefined : { username: 'root', password }),
  };
}

const login = (w: World, user: string, password: string, headers: Record<string, string> = {}) =>
  w.app.request('/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ user, password }).toString(),
  });

/** The session id a login's Set-Cookie carries. */
const sessionOf = (res: Response) => /watchdog_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
const withSession = (id: string) => ({ headers: { cookie: `watchdog_session=${id}` } });

const test = suite('http :: dashboard login');

test('login :: without accounts /login is 404 and the dashboard is as before (loopback)', async () => {
  const w = world(await usersDb([]));
  assert.is((await w.app.request('/login')).status, 404);
  assert.is((await login(w, 'root', 'admin-pw')).status, 404);
  assert.is(
    (await w.app.request('/api/instances', { headers: { authorization: basic('root', 'admin-pw') } })).status,
    200,
  );
});

test('login :: a good login sets an HttpOnly SameSite=Strict cookie and sends the browser to /', async () => {
  const w = world(await usersDb(MO));
  const res = await login(w, 'mo', PASSWORD);
  assert.is(res.status, 303);
  assert.is(res.headers.get('location'), '/');
  const cookie = res.headers.get('set-cookie') ?? '';
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Path=\//);
  assert.not.match(cookie, /Secure/, 'not over plain http');
  const me = await w.app.request('/api/me', withSession(sessionOf(res)));
  assert.equal(await me.json(), {
    user: 'mo',
    kind: 'user',
    accounts: true,
    session: true,
    permissions: { a: ['status.read', 'logs.read', 'control.restart', 'hold', 'console.send'] },
  });
  assert.equal(
    w.logins.map((e) => [e.user, e.result]),
    [['mo', 'ok']],
  );
});

test('login :: Secure only over https a trusted proxy vouches for', async () => {
  const trusted = world(await usersDb(MO), { trustedProxies: () => ['127.0.0.1'] });
  const viaProxy = await login(trusted, 'mo', PASSWORD, { 'x-forwarded-proto': 'https' });
  assert.match(viaProxy.headers.get('set-cookie') ?? '', /Secure/);
  const untrusted = world(await usersDb(MO));
  const claimed = await login(untrusted, 'mo', PASSWORD, { 'x-forwarded-proto': 'https' });
  assert.not.match(claimed.headers.get('set-cookie') ?? '', /Secure/, 'a header anyone can send');
});

test('login :: a wrong password is 401 on the form, counted; a cross-site login is refused', async () => {
  const w = world(await usersDb(MO));
  const wrong = await login(w, 'mo', 'nope');
  assert.is(wrong.status, 401);
  assert.match(await wrong.text(), /Wrong user name or password/);
  assert.is(sessionOf(wrong), '');
  assert.equal(w.logins.at(-1)?.result, 'wrong_password');
  const forged = await login(w, 'mo', PASSWORD, { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' });
  assert.is(forged.status, 403);
  assert.is(sessionOf(forged), '');
});

test('login :: a session ends when its user gets a new password or is removed', async () => {
  const w = world(await usersDb(MO));
  const first = sessionOf(await login(w, 'mo', PASSWORD));
  assert.is((await w.app.request('/api/me', withSession(first))).status, 200);
  w.setUsers(await usersDb(MO)); // the same password, hashed anew: another hash
  assert.is((await w.app.request('/api/me', withSession(first))).status, 401, 'password changed');
  const second = sessionOf(await login(w, 'mo', PASSWORD));
  assert.is((await w.app.request('/api/me', withSession(second))).status, 200);
  w.setUsers(await usersDb(['Users:', '  other:', '    Password: "HASH"']));
  assert.is((await w.app.request('/api/me', withSession(second))).status, 401, 'user removed');
});

test('login :: the Admin login logs in on the form; its session ends when Admin changes', async () => {
  const w = world(await usersDb(MO));
  const id = sessionOf(await login(w, 'root', 'admin-pw'));
  const me = (await (await w.app.request('/api/me', withSession(id))).json()) as { kind: string; permissions: object };
  assert.is(me.kind, 'admin');
  assert.equal(Object.keys(me.permissions), ['a', 'b']);
  w.setAdmin('another-pw');
  assert.is((await w.app.request('/api/me', withSession(id))).status, 401);
});

test('login :: with accounts a loopback client needs a login; a browser page visit goes to /login', async () => {
  const w = world(await usersDb(MO));
  const api = await w.app.request('/api/instances');
  assert.is(api.status, 401);
  const page = await w.app.request('/', { headers: { 'sec-fetch-mode': 'navigate', accept: 'text/html' } });
  assert.is(page.status, 303);
  assert.is(page.headers.get('location'), '/login');
});

/** Reads an SSE body until `pattern` is in it (or the stream ends); the text read. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, pattern: RegExp): Promise<string> {
  let text = '';
  while (!pattern.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return text;
}

test('login :: /events says hello with only the instances the user may see', async () => {
  const w = world(await usersDb(MO));
  const id = sessionOf(await login(w, 'mo', PASSWORD));
  const res = await w.app.request('/events', withSession(id));
  assert.is(res.status, 200);
  const reader = res.body!.getReader();
  const text = await readUntil(reader, /event: hello\ndata: .*\n/);
  const hello = JSON.parse(/event: hello\ndata: (.*)\n/.exec(text)?.[1] ?? '{}') as { instances: { key: string }[] };
  assert.equal(
    hello.instances.map((i) => i.key),
    ['a'],
  );
  w.bus.emit('instance:restart', { key: 'b', reason: 'request', at: 1 });
  w.bus.emit('instance:restart', { key: 'a', reason: 'request', at: 2 });
  const next = await readUntil(reader, /event: instance:restart\ndata: .*\n/);
  assert.not.match(next, /"key":"b"/, "b's event is not the moderator's");
  assert.match(next, /"key":"a"/);
  await reader.cancel();
});

test('login :: an open /events stream ends with its session', async () => {
  const w = world(await usersDb(MO));
  const id = sessionOf(await login(w, 'mo', PASSWORD));
  const reader = (await w.app.request('/events', withSession(id))).body!.getReader();
  await readUntil(reader, /event: hello\n/);
  await w.app.request('/logout', { method: 'POST', ...withSession(id) });
  w.bus.emit('instance:restart', { key: 'a', reason: 'request', at: 3 });
  const rest = await readUntil(reader, /event: instance:restart/);
  assert.not.match(rest, /instance:restart/, 'nothing after the logout');
});

test('login :: a session’s POST from another site is refused before its rights are asked', async () => {
  const w = world(await usersDb(MO));
  const id = sessionOf(await login(w, 'mo', PASSWORD));
  const post = (origin: string) =>
    w.app.request('/api/instances/a/hold', {
      method: 'POST',
      headers: { cookie: `watchdog_session=${id}`, 'x-watchdog-dashboard': '1', origin, host: 'localhost' },
    });
  const forged = await post('http://evil.example');
  assert.is(forged.status, 403);
  assert.match(((await forged.json()) as { error: string }).error, /^cross-site request refused/);
  // On its own address the request gets through to the instance (this stand-in cannot be held: its own answer).
  const own = (await (await post('http://localhost')).json()) as { error?: string };
  assert.not.match(own.error ?? '', /cross-site|may not/);
});

test('login :: a right is asked before the instance is looked up, so no one learns which exist', async () => {
  const w = world(await usersDb(MO));
  const id = sessionOf(await login(w, 'mo', PASSWORD));
  for (const key of ['b', 'ghost']) {
    const res = await w.app.request(`/api/instances/${key}/restart`, {
      method: 'POST',
      headers: { cookie: `watchdog_session=${id}`, 'x-watchdog-dashboard': '1' },
    });
    assert.equal(
      [res.status, ((await res.json()) as { permission?: string }).permission],
      [403, 'control.restart'],
      key,
    );
  }
});

test('login :: logout ends the session on the daemon and clears the cookie', async () => {
  const w = world(await usersDb(MO));
  const id = sessionOf(await login(w, 'mo', PASSWORD));
  const out = await w.app.request('/logout', { method: 'POST', ...withSession(id) });
  assert.is(out.status, 303);
  assert.is(out.headers.get('location'), '/login');
  assert.match(out.headers.get('set-cookie') ?? '', /watchdog_session=;.*Max-Age=0/);
  assert.is((await w.app.request('/api/me', withSession(id))).status, 401);
});

test.run();
