import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { harness, memoryInstance, memoryRegistry, send } from './_support/app.ts';

const info = suite('info routes');

info('info routes :: GET /watchdog/padlock answers the exact padlock bytes as text/plain; charset=utf-8', async () => {
  const { app } = harness(memoryRegistry());
  const res = await send(app, 'GET', '/watchdog/padlock');
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(Buffer.from(await res.arrayBuffer()), Buffer.from(' --\n|  |\n####\n####\n', 'utf8'));
});

info('info routes :: padlock needs no auth, and other methods → 405', async () => {
  const { app } = harness(memoryRegistry());
  assert.is((await send(app, 'GET', '/watchdog/padlock', 'Bearer nonsense')).status, 200);
  const res = await send(app, 'POST', '/watchdog/padlock');
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'GET, HEAD');
  assert.is((await send(app, 'GET', '/watchdog/other')).status, 404);
});

info('info routes :: GET /health reports status, version, uptime and each instance state', async () => {
  const a = memoryInstance('alpha', { state: 'server.running' });
  const b = memoryInstance('beta', { state: 'stopped.failing' });
  const { app } = harness(memoryRegistry(a, b));
  const res = await send(app, 'GET', '/health');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await res.json()) as {
    status: string;
    version: string;
    uptimeSeconds: number;
    instances: Record<string, string>;
  };
  assert.is(body.status, 'ok');
  assert.is(body.version, '9.9.9-test');
  assert.type(body.uptimeSeconds, 'number');
  // The process's uptime, whole seconds (this test process stands in for the daemon).
  const uptime = process.uptime();
  assert.ok(body.uptimeSeconds <= uptime && body.uptimeSeconds >= Math.floor(uptime) - 1, String(body.uptimeSeconds));
  assert.equal(body.instances, { alpha: 'server.running', beta: 'stopped.failing' });
  b.state = 'server.running';
  const again = (await (await send(app, 'GET', '/health')).json()) as { instances: Record<string, string> };
  assert.is(again.instances.beta, 'server.running', 'health reads live state');
});

info('info routes :: GET /health with no instances', async () => {
  const { app } = harness(memoryRegistry());
  const body = (await (await send(app, 'GET', '/health')).json()) as { instances: Record<string, string> };
  assert.equal(body.instances, {});
});

info.run();
