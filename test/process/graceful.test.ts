import * as assert from 'uvu/assert';
import { createLogger } from '../../src/log.ts';
import { leave, shutdownGracefully } from '../../src/process/graceful.ts';
import { requestUpdate } from '../../src/process/server-api.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import { apiUp, killAll, launchFixture, readLog } from '../_support/fixture-servers.ts';

const log = createLogger('test');
const windows = { requestMs: 300, exitMs: 300, maxAnswerBytes: 256_000, log };

const graceful = tempSuite('graceful', { prefix: 'wd-graceful-', after: () => killAll() });

graceful('graceful :: a cooperative server exits on /shutdown and logs the reason', async (ctx) => {
  const { proc, port, secret } = await launchFixture(ctx.dir, 'echo-env.mjs');
  await waitFor('api up', () => apiUp(port));
  const outcome = await shutdownGracefully(proc, {
    ...windows,
    exitMs: 5000,
    apiPort: port,
    secret,
    reason: 'Maintenance window.',
  });
  assert.is(outcome, 'exited');
  assert.equal(await proc.exited, { code: 0, signal: null });
  assert.match(await readLog(ctx.dir), /^Maintenance window\., shutting down\.\.\.$/m);
});

graceful('graceful :: a server that answers but never exits is killed after the exit window', async (ctx) => {
  const { proc, port, secret } = await launchFixture(ctx.dir, 'ignore-shutdown.mjs');
  await waitFor('api up', () => apiUp(port));
  const outcome = await shutdownGracefully(proc, { ...windows, apiPort: port, secret, reason: 'Restart requested.' });
  assert.is(outcome, 'killed');
  assert.equal(await proc.exited, { code: null, signal: 'SIGKILL' });
  assert.match(await readLog(ctx.dir), /ignoring shutdown: Restart requested\./, 'the request did arrive');
});

graceful(
  'graceful :: a server without an HTTP API is killed at once, without waiting for the exit window',
  async (ctx) => {
    const { proc, port, secret, lines } = await launchFixture(ctx.dir, 'no-http.mjs');
    await waitFor('server up', () => lines.some((l) => l.line.startsWith('fixture server up')));
    const t0 = Date.now();
    const outcome = await shutdownGracefully(proc, { ...windows, exitMs: 30_000, apiPort: port, secret, reason: 'r' });
    assert.is(outcome, 'killed');
    assert.ok(Date.now() - t0 < 10_000, 'did not sit out the 30 s exit window');
    assert.is((await proc.exited).signal, 'SIGKILL');
  },
);

graceful('graceful :: an already exited server resolves exited without a request', async (ctx) => {
  const { proc, port, secret } = await launchFixture(ctx.dir, 'exit-at-once.sh');
  await proc.exited;
  assert.is(await shutdownGracefully(proc, { ...windows, apiPort: port, secret, reason: 'r' }), 'exited');
});

graceful('graceful :: leave() asks with /update and lets the server go on its own', async (ctx) => {
  const { proc, port, secret } = await launchFixture(ctx.dir, 'echo-env.mjs');
  await waitFor('api up', () => apiUp(port));
  assert.is(await leave(proc, { ...windows, apiPort: port, secret, reason: 'Stop requested.' }), 'leaving');
  assert.equal(await proc.exited, { code: 0, signal: null });
  assert.match(await readLog(ctx.dir), /update requested \(reason UpdateAvailable\)/);
});

graceful('graceful :: leave() falls back to a graceful shutdown when /update is undeliverable', async (ctx) => {
  const { proc, port, secret, lines } = await launchFixture(ctx.dir, 'no-http.mjs');
  await waitFor('server up', () => lines.some((l) => l.line.startsWith('fixture server up')));
  assert.is(await leave(proc, { ...windows, apiPort: port, secret, reason: 'Stop requested.' }), 'killed');
  assert.is((await proc.exited).signal, 'SIGKILL');
});

graceful('graceful :: leave() with a wrong secret (401 on /update) falls back to /shutdown', async (ctx) => {
  const { proc, port } = await launchFixture(ctx.dir, 'echo-env.mjs');
  await waitFor('api up', () => apiUp(port));
  assert.is(await requestUpdate(port, 'wrong', { timeoutMs: 2000, maxBytes: 256_000 }), false);
  // /shutdown with the same wrong secret is "delivered" (401) but the server stays: killed after the exit window.
  assert.is(await leave(proc, { ...windows, apiPort: port, secret: 'wrong', reason: 'r' }), 'killed');
  assert.is((await proc.exited).signal, 'SIGKILL');
});

graceful.run();
