import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { isAlive, killGroup, logLines, running, statusOf, waitStatus } from '../resilience/_support/daemon-crash.ts';

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
  assert.is(await d.control('ig', 'tok', 'restart'), 200);
  const next = await waitStatus(d, 'ig', 'tok', 'relaunched', (s) => running(s) && s.pid !== old, 15_000);
  ctx.pids.add(next.pid!);
  assert.not.ok(isAlive(old), 'the old server is gone');
  // In this order: /shutdown delivered and acknowledged, the exit window (1 s) waited out, the kill, the relaunch.
  const lines = logLines(
    d,
    /\[watchdog:ig(:server)?\] (ignoring shutdown: Restart requested by the watchdog|server did not exit after the shutdown request|server launched)/,
  );
  assert.is(lines.length, 4, lines.join('\n'));
  assert.match(lines[0]!, /server launched/);
  assert.match(lines[1]!, /\[watchdog:ig:server\] ignoring shutdown/, '/shutdown was delivered and acknowledged');
  assert.match(lines[2]!, /killing it .*waitedMs=1000/, 'waited the 1 s exit window before the kill');
  assert.match(lines[3]!, /server launched/);
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
  // It stays down (the real watchdog loses the instance here; ours keeps it and obeys the stop): the daemon has
  // gone on past the longest back-off (BackoffMaxSeconds 1) that a relaunch would wait, by a check-in of the other
  // instance accepted later than that, and nh was launched once only.
  const stoppedAt = Date.now();
  const other = await waitStatus(
    d,
    'ig',
    'tok',
    'a check-in past the longest back-off',
    (st) => st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > stoppedAt + 1500,
  );
  assert.is(other.state, 'server.running', 'the other instance is unaffected');
  assert.is((await statusOf(d, 'nh', 'tok')).state, 'stopped.idle');
  assert.is(logLines(d, /\[watchdog:nh\] server launched/).length, 1, 'never launched again');
});

test.run();
