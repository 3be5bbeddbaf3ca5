import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LaunchBlockedError } from '../../src/errors.ts';
import { isAlive } from '../../src/process/proc-info.ts';
import { detectTracking, MARKER_ENV, type ProcessTracking } from '../../src/process/tracking.ts';
import { clearForLaunch } from '../../src/supervisor/process-host.ts';
import { waitFor } from '../_support/env.ts';
import { holdPort, release } from '../_support/port-holder.ts';
import { captureLog } from '../_support/recording-logger.ts';

const test = suite<{ tracking: ProcessTracking }>('supervisor :: the game port before a launch', {
  tracking: null as unknown as ProcessTracking,
});

test.before(async (ctx) => {
  // The marker is what every mode can see; a made-up folder keeps these markers apart from any daemon's.
  ctx.tracking = await detectTracking({ workDir: '/port-guard-test', forceMarker: true, killMs: () => 2000 });
});

/** The marker a launch of `key` by this tracking would carry. */
async function markerFor(tracking: ProcessTracking, key: string): Promise<string> {
  return (await tracking.begin(key)).marker;
}

test('port-guard :: a port held by a process that is not ours: reported exactly, launch blocked, holder left alone', async (ctx) => {
  const h = await holdPort('tcp');
  const log = captureLog();
  try {
    const err = await clearForLaunch({ key: 'a', port: h.port, tracking: ctx.tracking, log, waitMs: 500 }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(err, LaunchBlockedError);
    const blocked = err as LaunchBlockedError;
    assert.is(blocked.kind, 'port');
    assert.is(
      blocked.message,
      `port ${h.port} held by pid ${h.pid} (${readFileSync(`/proc/${h.pid}/comm`, 'utf8').trim()}), which this watchdog did not start; the server cannot start until it is freed`,
    );
    assert.ok(isAlive(h.pid), 'not killed');
  } finally {
    await release(h.child);
  }
});

test("port-guard :: another instance's process is not this one's either", async (ctx) => {
  const h = await holdPort('udp', { env: { [MARKER_ENV]: await markerFor(ctx.tracking, 'other') } });
  try {
    await clearForLaunch({ key: 'a', port: h.port, tracking: ctx.tracking, log: captureLog(), waitMs: 500 }).then(
      () => assert.unreachable('the launch should be blocked'),
      (e: unknown) => assert.instance(e, LaunchBlockedError),
    );
    assert.ok(isAlive(h.pid));
  } finally {
    await release(h.child);
  }
});

test('port-guard :: a holder left by an earlier launch of the instance is named, killed, and the port is free', async (ctx) => {
  const h = await holdPort('tcp', { env: { [MARKER_ENV]: await markerFor(ctx.tracking, 'a') } });
  const log = captureLog();
  try {
    await clearForLaunch({ key: 'a', port: h.port, tracking: ctx.tracking, log, waitMs: 2000 });
    await waitFor('the holder to exit', () => h.child.exitCode !== null || h.child.signalCode !== null, 10_000);
    assert.is(h.child.signalCode, 'SIGKILL');
    assert.ok(
      log.lines.some(
        (l) => l.includes(`port ${h.port} held by pid ${h.pid} (`) && l.includes('left from the previous launch'),
      ),
      log.lines.join('\n'),
    );
  } finally {
    await release(h.child);
  }
});

test("port-guard :: a leftover off the port is the start sweep's: the launch leaves it", async (ctx) => {
  const h = await holdPort('tcp', { env: { [MARKER_ENV]: await markerFor(ctx.tracking, 'a') } });
  try {
    await clearForLaunch({ key: 'a', port: 1, tracking: ctx.tracking, log: captureLog(), waitMs: 100 });
    assert.ok(isAlive(h.pid), 'a free port sweeps nothing');
  } finally {
    await release(h.child);
  }
});

test("port-guard :: the daemon's own port: said so, not a stranger's", async (ctx) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    await clearForLaunch({ key: 'a', port, tracking: ctx.tracking, log: captureLog(), waitMs: 100 }).then(
      () => assert.unreachable('the launch should be blocked'),
      (e: unknown) =>
        assert.is(
          (e as Error).message,
          `port ${port} is this watchdog's own: ApiPort must differ from the ports in Urls`,
        ),
    );
  } finally {
    server.close();
  }
});

test('port-guard :: a free port and nothing left: no word, no error', async (ctx) => {
  const log = captureLog();
  await clearForLaunch({ key: 'a', port: 1, tracking: ctx.tracking, log, waitMs: 100 });
  assert.equal(log.lines, []);
});

test.run();
