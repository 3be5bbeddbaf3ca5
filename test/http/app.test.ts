import { HTTPException } from 'hono/http-exception';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { InstanceStatus } from '../../src/supervisor/status.ts';
import { basic, harness, memoryInstance, memoryRegistry, send } from './_support/app.ts';

const app = suite('app');

// `/` is the dashboard (admin access rule): test/http/dashboard-access.test.ts.
app('app :: unknown paths → 404 JSON', async () => {
  const { app } = harness(memoryRegistry());
  for (const path of ['/nope', '/instances/x', '/server_api', '/health/x']) {
    const res = await send(app, 'GET', path);
    assert.is(res.status, 404, path);
    assert.equal(await res.json(), { error: 'not found' });
  }
});

app('app :: an unexpected error → 500 JSON {error}, logged without the Authorization header', async () => {
  const broken = memoryInstance('alpha', { apiToken: 'secret-token-123' });
  broken.status = (): InstanceStatus => {
    throw new Error('snapshot unavailable');
  };
  const h = harness(memoryRegistry(broken));
  const res = await send(h.app, 'GET', '/instances/alpha/status', basic('alpha', 'secret-token-123'));
  assert.is(res.status, 500);
  assert.equal(await res.json(), { error: 'internal error' });
  const line = h.log.lines.find((l) => l.startsWith('error'));
  assert.ok(line, 'the error is logged');
  assert.match(line ?? '', 'snapshot unavailable');
  assert.match(line ?? '', '/instances/alpha/status');
  assert.not.match(h.log.lines.join('\n'), 'secret-token-123');
});

app('app :: a control() that throws is still audited, then answers 500', async () => {
  const broken = memoryInstance('alpha', { apiToken: 't' });
  broken.control = () => {
    throw new Error('actor stopped');
  };
  const h = harness(memoryRegistry(broken));
  const res = await send(h.app, 'POST', '/instances/alpha/restart', basic('alpha', 't'));
  assert.is(res.status, 500);
  assert.equal(
    h.controls.map((e) => [e.status, e.result]),
    [[500, 'refused']],
  );
});

app('app :: onError keeps an HTTPException response intact (WWW-Authenticate survives)', async () => {
  const h = harness(memoryRegistry());
  h.app.get('/test-only/challenge', () => {
    throw new HTTPException(401, {
      res: new Response('no', { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="x"' } }),
    });
  });
  h.app.get('/test-only/plain', () => {
    throw new HTTPException(418, { message: 'teapot' });
  });
  const res = await send(h.app, 'GET', '/test-only/challenge');
  assert.is(res.status, 401);
  assert.is(res.headers.get('www-authenticate'), 'Basic realm="x"');
  const plain = await send(h.app, 'GET', '/test-only/plain');
  assert.is(plain.status, 418);
  assert.equal(await plain.json(), { error: 'teapot' });
  assert.equal(
    h.log.lines.filter((l) => l.startsWith('error')),
    [],
    'HTTPExceptions are answers, not failures',
  );
});

app.run();
