import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { metricValue } from '../../_support/metric-value.ts';
import { mountSmallFs, tmpfsUnavailable } from '../../_support/tmpfs.ts';
import { killGroup, running, statusOf, waitStatus } from '../resilience/_support/daemon-crash.ts';
import { lastChat, withInstanceRoot } from './_support/environment.ts';

/**
 * A full disk under the instance root ended the daemon with ENOSPC from the server-log writer. Now the
 * daemon stays up, the instance stays supervised (same server, check-ins accepted), dropped lines are counted,
 * and the log resumes by itself once space returns. Both log paths: piped (PersistServers false) and the server
 * writing the file itself (true).
 */
const test = suite('e2e :: faults: a full disk under the instance root');
const unavailable = tmpfsUnavailable();

for (const persist of [false, true]) {
  const name = `disk-full :: PersistServers ${persist}: the daemon and the instance survive a full disk, and server.log resumes by itself`;
  if (unavailable) {
    console.log(`skipped "${name}": ${unavailable}`);
    test.skip(name, () => undefined);
    continue;
  }
  test(name, async () => {
    const fs = mountSmallFs(4 * 1024 * 1024);
    const tmp = await tempDir('wd-diskfull-');
    let d: RunningDaemon | undefined;
    let pid: number | null = null;
    try {
      const port = await freePort();
      const yaml = testConfig({
        persist,
        instances: [{ key: 'chatty', port, runCommand: fixture('chatty.mjs') }],
        extra: '  LogRetrySeconds: 0.2\nLogs:\n  ServerLogMaxBytes: 262144\n  ServerLogFiles: 2',
      });
      d = await startDaemon(withInstanceRoot(yaml, join(fs.path, 'instances')), { dir: tmp.path });
      const daemon = d;
      pid = (await waitStatus(daemon, 'chatty', 'tok', 'server.running', running)).pid;
      const logDir = join(fs.path, 'instances', 'chatty', 'logs');
      await waitFor('chat lines in server.log', async () => (await lastChat(logDir)) > 100, 10_000);

      fs.fill(0);
      assert.ok(fs.free() < 64 * 1024, `the disk is full (${fs.free()} bytes free)`);
      if (!persist) {
        await waitFor(
          'dropped lines on /metrics',
          async () =>
            ((await metricValue(daemon.url, 'watchdog_log_lines_dropped_total', { instance: 'chatty' })) ?? 0) > 0,
          10_000,
        );
      }
      // Still supervised on the full disk: the same server, running, its check-ins accepted.
      const before = (await statusOf(daemon, 'chatty', 'tok')).lastCheckinAt;
      await waitStatus(
        daemon,
        'chatty',
        'tok',
        'a check-in accepted while the disk is full',
        (s) => running(s) && s.pid === pid && s.lastCheckinAt !== before,
        10_000,
      );
      assert.is(daemon.proc.exitCode, null, 'the daemon is alive');

      const seen = await lastChat(logDir);
      fs.release();
      await waitFor(
        'new lines in server.log once space is back',
        async () => (await lastChat(logDir)) > seen + 200,
        10_000,
      );
      const after = await statusOf(daemon, 'chatty', 'tok');
      assert.is(after.pid, pid, 'never relaunched');
      assert.is(after.state, 'server.running');
      if (!persist) {
        assert.match(
          daemon.log(),
          /cannot write \S+server\.log \(ENOSPC\): dropping its lines.*free space on that file system/,
        );
        assert.match(daemon.log(), /writing \S+server\.log again; \d+ line\(s\) were dropped meanwhile/);
        assert.is(daemon.log().match(/cannot write \S+server\.log/g)?.length, 1, 'told once, not per line');
        const text = [
          await readFile(join(logDir, 'server.log'), 'utf8'),
          await readFile(join(logDir, 'server.log.1'), 'utf8').catch(() => ''),
        ].join('\n');
        assert.match(text, /watchdog: \d+ line\(s\) dropped: server\.log could not be written \(ENOSPC\)/);
      }
      assert.not.match(daemon.log(), /uncaught|unhandled/i);
    } finally {
      await d?.stop();
      if (pid !== null) killGroup(pid);
      fs.unmount();
      await tmp.cleanup();
    }
  });
}

test.run();
