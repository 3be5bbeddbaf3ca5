import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import {
  isAlive,
  killGroup,
  logLines,
  running,
  sleep,
  statusOf,
  waitStatus,
} from '../resilience/_support/daemon-crash.ts';

/** Servers that do not cooperate with a shutdown (the real watchdog loses an instance whose server's API is down). */
const test = daemonSuite('e2e :: faults: servers that ignore /shutdown or have no HTTP API', {
  ctx: { pids: new Set<number>() },
  // Timing (test/_support/config.ts): ShutdownRequestSeconds 1, ShutdownExitSeconds 1.
  config: async () =>
    testConfig({
      instances: [
        { key: 'ig', port: await freePort(), runCommand: fixture('ignore-shutdown.mjs'), timeoutSeconds: 5 },
        { key: 'nh', port: await freePort(), runCommand: fixture('no-http.mjs'), timeoutSeconds: 5 },
      ],
    }),
  after: (ctx) => {
    for (const pid of ctx.pids) killGroup(pid);
  },
});

test('shutdown :: ignores /shutdown: on restart it is killed once the exit window has passed, and relaunched', async (ctx) => {
  const d = ctx.daemon!;
  const old = (await waitStatus(d, 'ig', 'tok', 'server.running', running)).pid!;
  ctx.pids.add(old);
  const asked = Date.now();
  assert.is(await d.control('ig', 'tok', 'restart'), 200);
  const next = await waitStatus(d, 'ig', 'tok', 'relaunched', (s) => running(s) && s.pid !== old, 15_000);
  ctx.pids.add(next.pid!);
  const took = Date.now() - asked;
  assert.ok(took >= 1000, `waited the 1 s exit window before the kill (took ${took} ms)`);
  assert.not.ok(isAlive(old), 'the old server is gone');
  assert.match(
    d.log(),
    /\[watchdog:ig:server\] ignoring shutdown: Restart requested by the watchdog/,
    '/shutdown was delivered and acknowledged',
  );
  assert.match(d.log(), /\[watchdog:ig\] server did not exit after the shutdown request; killing it .*waitedMs=1000/);
});

test('shutdown :: HTTP API closed: stop falls back to a graceful shutdown, then a kill, and the instance ends stopped.idle', async (ctx) => {
  const d = ctx.daemon!;
  const old = (await waitStatus(d, 'nh', 'tok', 'server.running', running)).pid!;
  ctx.pids.add(old);
  assert.is(await d.control('nh', 'tok', 'stop'), 200);
  const s = await waitStatus(d, 'nh', 'tok', 'stopped.idle', (st) => st.state === 'stopped.idle', 15_000);
  assert.is(s.pid, null);
  assert.ok(s.stopRequested);
  await waitFor('the server gone', () => !isAlive(old), 5000);
  const lines = logLines(d, /\[watchdog:nh\] (update request not delivered|shutdown request not delivered)/);
  assert.match(lines[0] ?? '', /update request not delivered; shutting the server down instead/, 'POST /update first');
  assert.match(
    lines[1] ?? '',
    /shutdown request not delivered; killing the server/,
    'then POST /shutdown, then the kill',
  );
  // It stays down (the real watchdog loses the instance here; ours keeps it and obeys the stop).
  await sleep(1000);
  assert.is((await statusOf(d, 'nh', 'tok')).state, 'stopped.idle');
  assert.is((await statusOf(d, 'ig', 'tok')).state, 'server.running', 'the other instance is unaffected');
});

test.run();
