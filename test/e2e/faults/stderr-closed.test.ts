import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite, waitState } from '../../_support/daemon.ts';
import { freePort } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { metricValue } from '../../_support/metric-value.ts';
import { killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * The daemon's log is stderr; when whoever reads it goes away (a closed terminal, a pipe to a logger that
 * died) every further line fails with EPIPE or EIO. That loses the lines, not the daemon.
 */
const test = daemonSuite('e2e :: faults: nobody reads the daemon log any more', {
  prefix: 'wd-stderr-',
  ctx: { pids: [] as number[] },
  config: async () =>
    testConfig({ instances: [{ key: 'alpha', port: await freePort(), runCommand: fixture('log-starts.mjs') }] }),
  after: (ctx) => ctx.pids.forEach(killGroup),
});

test('stderr-closed :: stderr closed: the daemon goes on logging into nothing and supervising', async (ctx) => {
  const d = ctx.daemon!;
  const first = await waitStatus(d, 'alpha', 'tok', 'server.running', running);
  ctx.pids.push(first.pid!);
  // Close our end of the daemon's stderr pipe: its next log line meets EPIPE.
  d.proc.stderr?.destroy();
  // A restart makes it log (control accepted, shutdown, launch) and proves it still supervises.
  assert.is(await d.control('alpha', 'tok', 'restart'), 200);
  const next = await waitState(d, 'alpha', 'tok', 'server.running', { notPid: first.pid });
  ctx.pids.push(next.pid!);
  assert.ok(next.pid !== first.pid, 'relaunched');
  // The failed writes of those lines are reported asynchronously; a check-in accepted after them is later still.
  const seen = Date.now();
  const later = await waitStatus(
    d,
    'alpha',
    'tok',
    'a check-in after the relaunch',
    (st) => st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > seen,
  );
  assert.is(d.proc.exitCode, null, 'the daemon is alive');
  assert.is(later.state, 'server.running');
  assert.is(later.pid, next.pid);
  // Handled where the log writes, not caught at the top as an escaped error.
  for (const kind of ['uncaught-exception', 'unhandled-rejection'])
    assert.is(await metricValue(d.url, 'watchdog_uncaught_errors_total', { kind }), 0, kind);
});

test.run();
