/** `/api/instances` (src/http/api-routes.ts): statuses, the server log tail, and the dashboard's control proxy. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type BusEvents, createBus } from '../../src/bus.ts';
import type { AdminCredentials } from '../../src/http/account-access.ts';
import { DASHBOARD_HEADER, instanceDir } from '../../src/http/api-routes.ts';
import { createApp } from '../../src/http/app.ts';
import type { InstanceControl } from '../../src/supervisor/contract.ts';
import { tempDir } from '../_support/env.ts';
import { basic, fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

function setup(instances: InstanceControl[], admin?: AdminCredentials, startingUp?: () => boolean) {
  const bus = createBus();
  const controls: BusEvents['instance:control'][] = [];
  bus.on('instance:control', (e) => controls.push(e));
  const refused: BusEvents['daemon:request-refused'][] = [];
  bus.on('daemon:request-refused', (e) => refused.push(e));
  const log = recordingLogger();
  const app = fromLoopback(
    createApp({
      registry: { ...memoryRegistry(...instances), startingUp },
      bus,
      log,
      version: '1',
      admin: () => admin,
    }),
  );
  return { app, controls, refused, log };
}

const list = suite('api :: GET /api/instances');

list('api :: every instance status, as the control API shows one', async () => {
  const a = memoryInstance('alpha', { apiToken: 't' });
  const b = memoryInstance('beta', { state: 'stopped.idle' });
  const { app } = setup([a, b]);
  const res = await app.request('/api/instances');
  assert.is(res.status, 200);
  const body = (await res.json()) as { key: string; state: string }[];
  assert.equal(body, [a.status(), b.status()]);
  assert.equal(
    body.map((s) => s.state),
    ['server.running', 'stopped.idle'],
  );
});

list('api :: no instances → []; POST → 405', async () => {
  const { app } = setup([]);
  assert.equal(await (await app.request('/api/instances')).json(), []);
  assert.is((await app.request('/api/instances', { method: 'POST' })).status, 405);
});

list('api :: while the daemon registers its instances: 503 with Retry-After, and /health says starting', async () => {
  let starting = true;
  const { app } = setup([], undefined, () => starting);
  const early = await app.request('/api/instances');
  assert.is(early.status, 503);
  assert.is(early.headers.get('retry-after'), '1');
  assert.equal(await early.json(), { error: 'the daemon is still registering its instances; retry in a moment' });
  assert.is(((await (await app.request('/health')).json()) as { starting?: true }).starting, true);
  starting = false;
  assert.equal(await (await app.request('/api/instances')).json(), []);
  assert.not.ok('starting' in ((await (await app.request('/health')).json()) as object));
});

list.run();

// ---

const logs = suite('api :: GET /api/instances/:key/log', { dir: '', cleanup: async () => {} });

logs.before.each(async (ctx) => {
  const t = await tempDir('wd-api-log-');
  ctx.dir = t.path;
  ctx.cleanup = t.cleanup;
});
logs.after.each(async (ctx) => ctx.cleanup());

logs('api :: the last n lines, reaching into the rotated log; default 100', async ({ dir }) => {
  const inst = memoryInstance('alpha', { binariesDir: join(dir, 'binaries') });
  assert.is(instanceDir(inst), dir, 'the folder above binaries/');
  await mkdir(join(dir, 'logs'));
  const older = Array.from({ length: 150 }, (_, i) => `old ${i}`);
  await writeFile(join(dir, 'logs', 'server.log.1'), older.join('\n') + '\n');
  await writeFile(join(dir, 'logs', 'server.log'), 'new 0\r\nnew 1\n');
  const { app } = setup([inst]);
  const three = (await (await app.request('/api/instances/alpha/log?n=3')).json()) as { key: string; lines: string[] };
  assert.equal(three, { key: 'alpha', lines: ['old 149', 'new 0', 'new 1'] });
  const dflt = (await (await app.request('/api/instances/alpha/log')).json()) as { lines: string[] };
  assert.is(dflt.lines.length, 100);
  assert.is(dflt.lines.at(-1), 'new 1');
});

logs('api :: no log yet → []; a log written later is read', async ({ dir }) => {
  const inst: InstanceControl = memoryInstance('alpha', { binariesDir: join(dir, 'elsewhere', 'binaries') });
  await mkdir(join(dir, 'elsewhere', 'logs'), { recursive: true });
  const { app } = setup([inst]);
  assert.equal(await (await app.request('/api/instances/alpha/log')).json(), { key: 'alpha', lines: [] });
  await writeFile(join(dir, 'elsewhere', 'logs', 'server.log'), 'hello\n');
  assert.equal(await (await app.request('/api/instances/alpha/log')).json(), { key: 'alpha', lines: ['hello'] });
});

logs('api :: bad n → 400; unknown instance → 404', async () => {
  const { app } = setup([memoryInstance('alpha')]);
  for (const n of ['0', '-1', 'abc', '1001', '1.5', '']) {
    assert.is((await app.request(`/api/instances/alpha/log?n=${n}`)).status, 400, `n=${n}`);
  }
  assert.is((await app.request('/api/instances/ghost/log')).status, 404);
});

logs.run();

// ---

const control = suite('api :: POST /api/instances/:key/:action (dashboard control)');
const header = { [DASHBOARD_HEADER]: '1' };

control('api :: calls control() and audits it with the admin user and the result', async () => {
  const a = memoryInstance('alpha', { apiToken: 't' });
  const admin = { username: 'ops', password: 'pw' };
  const { app, controls } = setup([a], admin);
  for (const action of ['restart', 'update', 'stop', 'rollback']) {
    const res = await app.request(`/api/instances/alpha/${action}`, {
      method: 'POST',
      headers: { ...header, authorization: basic('ops', 'pw') },
    });
    assert.is(res.status, 200, action);
    assert.equal(await res.json(), { key: 'alpha', action, accepted: true });
  }
  assert.equal(a.calls, ['control:restart', 'control:update', 'control:stop', 'control:rollback']);
  // Who asked travels with the call (a remembered stop and its chat message name them).
  assert.ok(
    a.requesters.every((r) => r.startsWith('by ops')),
    a.requesters.join(', '),
  );
  assert.is(controls.length, 4);
  assert.equal(
    { ...controls[0], at: 0 },
    { key: 'alpha', action: 'restart', user: 'ops', remote: '127.0.0.1', status: 200, result: 'accepted', at: 0 },
  );
});

control(
  'api :: without the dashboard header → 403, reported as refused, nothing done (a cross-site form cannot send it)',
  async () => {
    const a = memoryInstance('alpha', { apiToken: 't' });
    const { app, controls, refused } = setup([a]);
    const res = await app.request('/api/instances/alpha/stop', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'x=1',
    });
    assert.is(res.status, 403);
    assert.match(((await res.json()) as { error: string }).error, DASHBOARD_HEADER);
    assert.equal(a.calls, []);
    // Anyone on the loopback can repeat it at will: a daemon:request-refused, rate-limited where it is written.
    assert.equal(controls, []);
    assert.is(refused[0]?.route, 'admin');
    assert.is(refused[0]?.status, 403);
  },
);

control('api :: an instance without ApiToken refuses control here too; unknown instance → 404; GET → 405', async () => {
  const a = memoryInstance('alpha');
  const { app, controls, refused } = setup([a]);
  const res = await app.request('/api/instances/alpha/restart', { method: 'POST', headers: header });
  assert.is(res.status, 403);
  assert.match(((await res.json()) as { error: string }).error, 'no ApiToken');
  assert.equal(a.calls, []);
  assert.is((await app.request('/api/instances/ghost/restart', { method: 'POST', headers: header })).status, 404);
  assert.equal(
    controls.map((c) => c.status),
    [403],
  );
  assert.equal(
    refused.map((c) => c.status),
    [404],
  );
  assert.is((await app.request('/api/instances/alpha/restart')).status, 405);
  assert.is((await app.request('/api/instances/alpha/explode', { method: 'POST', headers: header })).status, 404);
});

control('api :: admin credentials are checked before anything is done', async () => {
  const a = memoryInstance('alpha', { apiToken: 't' });
  const { app, controls } = setup([a], { username: 'ops', password: 'pw' });
  const res = await app.request('/api/instances/alpha/stop', {
    method: 'POST',
    headers: { ...header, authorization: basic('alpha', 't') },
  });
  assert.is(res.status, 401);
  assert.equal(a.calls, []);
  assert.equal(controls, []);
});

control('api :: a control key with control characters is cleaned in the refusal event', async () => {
  const { app, refused } = setup([]);
  await app.request('/api/instances/a%1b%5b31m/stop', { method: 'POST', headers: header });
  assert.is(refused[0]?.key, 'a?[31m');
});

control.run();
