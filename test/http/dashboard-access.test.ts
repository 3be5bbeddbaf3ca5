/**
 * The admin access rule (src/http/admin-auth.ts) on every admin route: Basic `Admin.Username:Admin.Password` when
 * Admin is configured; otherwise loopback clients only. Socket cases run over a real listening server, so the
 * remote address is the kernel's, not a header.
 */
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { isLoopback } from '../../src/config/listen.ts';
import type { AdminCredentials } from '../../src/http/account-access.ts';
import { isLoopbackHost } from '../../src/http/admin-auth.ts';
import { createApp } from '../../src/http/app.ts';
import { startHttpServer } from '../../src/http/server.ts';
import { b64, basic, fromLoopback, memoryInstance, memoryRegistry, recordingLogger, send } from './_support/app.ts';

const ADMIN_ROUTES = [
  '/',
  '/dashboard/app.js',
  '/dashboard/style.css',
  '/statechart.svg',
  '/metrics',
  '/api/instances',
  '/api/instances/alpha/log',
];

function appWith(opts: { admin?: AdminCredentials; loopback?: boolean }) {
  let admin = opts.admin;
  const app = createApp({
    registry: memoryRegistry(memoryInstance('alpha', { apiToken: 't' })),
    bus: createBus(),
    log: recordingLogger(),
    version: '1.2.3',
    admin: () => admin,
  });
  return { app: opts.loopback ? fromLoopback(app) : app, setAdmin: (a: AdminCredentials | undefined) => (admin = a) };
}

// ---

const addr = suite('admin access :: addresses');

addr('isLoopback :: 127.0.0.0/8, ::1 and IPv4-mapped 127.x only', () => {
  for (const a of ['127.0.0.1', '127.255.0.9', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.1.2.3'])
    assert.ok(isLoopback(a), a);
  for (const a of [
    '10.0.0.1',
    '128.0.0.1',
    '::ffff:10.0.0.1',
    '::2',
    'fe80::1',
    'localhost',
    '',
    undefined,
    '127.0.0.1.evil',
  ])
    assert.not.ok(isLoopback(a), String(a));
});

addr('isLoopbackHost :: loopback names and addresses, with or without a port', () => {
  for (const h of ['localhost', 'LOCALHOST:5000', 'app.localhost:80', '127.0.0.1:5000', '[::1]:5000', '[::1]'])
    assert.ok(isLoopbackHost(h), h);
  for (const h of ['evil.example', 'evil.example:5000', 'localhost.evil.example', '10.0.0.1:5000', '', undefined])
    assert.not.ok(isLoopbackHost(h), String(h));
});

addr.run();

// ---

const admin = suite('admin access :: with Admin configured');
const creds = { username: 'ops', password: 'pa:ss wörd' };

admin('dashboard-access :: no or non-Basic header → 401 with the admin challenge on every admin route', async () => {
  const { app } = appWith({ admin: creds, loopback: true });
  for (const path of ADMIN_ROUTES) {
    for (const header of [undefined, 'Bearer abc']) {
      const res = await send(app, 'GET', path, header);
      assert.is(res.status, 401, `${path} ${header}`);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Basic realm="watchdog admin"/);
    }
  }
});

admin('dashboard-access :: malformed Basic → 400; wrong user or password → 401; right → 200', async () => {
  const { app } = appWith({ admin: creds, loopback: true });
  assert.is((await send(app, 'GET', '/api/instances', 'Basic !!!')).status, 400);
  assert.is((await send(app, 'GET', '/api/instances', `Basic ${b64('no-colon')}`)).status, 400);
  assert.is((await send(app, 'GET', '/api/instances', basic('ops', 'pa:ss'))).status, 401);
  assert.is((await send(app, 'GET', '/api/instances', basic('Ops', creds.password))).status, 401);
  assert.is(
    (await send(app, 'GET', '/api/instances', basic('alpha', 't'))).status,
    401,
    'an instance token is not admin',
  );
  for (const path of ADMIN_ROUTES) {
    const res = await send(app, 'GET', path, `basic ${b64(`ops:${creds.password}`)}`);
    assert.is(res.status, 200, path);
  }
});

admin('dashboard-access :: credentials are required even from loopback, and a reload applies at once', async () => {
  const { app, setAdmin } = appWith({ loopback: true });
  const server = await startHttpServer(app, { port: 0 });
  try {
    assert.is((await fetch(`${server.url}/api/instances`)).status, 200, 'no Admin: loopback is let in');
    setAdmin(creds);
    assert.is((await fetch(`${server.url}/api/instances`)).status, 401, 'Admin set: loopback must authenticate');
    const ok = await fetch(`${server.url}/api/instances`, { headers: { authorization: basic('ops', creds.password) } });
    assert.is(ok.status, 200);
    setAdmin({ ...creds, password: 'rotated' });
    const old = await fetch(`${server.url}/api/instances`, {
      headers: { authorization: basic('ops', creds.password) },
    });
    assert.is(old.status, 401, 'the old password stops working');
  } finally {
    await server.close();
  }
});

admin('dashboard-access :: the routes of the control API keep their own auth (no admin needed)', async () => {
  const { app } = appWith({ admin: creds, loopback: true });
  assert.is((await send(app, 'GET', '/health')).status, 200);
  assert.is((await send(app, 'GET', '/instances/alpha/status', basic('alpha', 't'))).status, 200);
});

admin.run();

// ---

const local = suite('admin access :: without Admin');

local('dashboard-access :: no socket and no test option → 403, never silently let in', async () => {
  const { app } = appWith({});
  for (const path of ADMIN_ROUTES) {
    const res = await send(app, 'GET', path);
    assert.is(res.status, 403, path);
    const body = (await res.json()) as { error: string };
    assert.match(body.error, 'Admin.Username');
  }
});

local('dashboard-access :: a loopback client over a real socket is served, without credentials', async () => {
  const { app } = appWith({});
  const server = await startHttpServer(app, { port: 0 });
  try {
    for (const path of ADMIN_ROUTES) {
      const res = await fetch(`${server.url}${path}`);
      await res.arrayBuffer();
      assert.is(res.status, 200, path);
    }
    const res = await fetch(`${server.url.replace('127.0.0.1', 'localhost')}/api/instances`);
    assert.is(res.status, 200, 'Host: localhost');
  } finally {
    await server.close();
  }
});

local('dashboard-access :: a loopback client naming another host (DNS rebinding) → 403', async () => {
  const { app } = appWith({});
  const server = await startHttpServer(app, { port: 0 });
  try {
    const res = await getWithHost(server.port, '/api/instances', `evil.example:${server.port}`);
    assert.is(res.status, 403);
    assert.match(res.body, 'localhost');
    assert.is((await getWithHost(server.port, '/api/instances', `localhost:${server.port}`)).status, 200);
  } finally {
    await server.close();
  }
});

/** GET over a real socket with the Host header we choose (fetch sets its own). */
function getWithHost(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A non-loopback address of this machine, if it has one (containers usually do). */
function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

const EXTERNAL = 'a client from a non-loopback address → 403 saying to configure Admin; with Admin it may authenticate';
const ext = externalAddress();
if (!ext) console.log(`skipped "${EXTERNAL}": this machine has no non-loopback IPv4 address`);
(ext ? local : local.skip)(EXTERNAL, async () => {
  if (!ext) return;
  const { app, setAdmin } = appWith({});
  const server = await startHttpServer(app, { port: 0, host: ext });
  try {
    const res = await fetch(`${server.url}/metrics`);
    assert.is(res.status, 403);
    assert.match(((await res.json()) as { error: string }).error, 'set Admin.Username and Admin.Password');
    setAdmin(creds);
    const authed = await fetch(`${server.url}/metrics`, { headers: { authorization: basic('ops', creds.password) } });
    await authed.arrayBuffer();
    assert.is(authed.status, 200);
  } finally {
    await server.close();
  }
});

local.run();
