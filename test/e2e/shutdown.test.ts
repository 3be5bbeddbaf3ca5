import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { startDaemon } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';

const test = suite('e2e :: daemon shutdown');

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal}: every server is shut down gracefully, the daemon exits 0, no process is left`, async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const d = await startDaemon(testConfig({ instances: [{ key: 'one', port: p1 }, { key: 'two', port: p2 }] }));
    try {
      const pids = await Promise.all(['one', 'two'].map((k) => waitFor(`${k} running`, async () => {
        const s = await d.status(k, 'tok');
        return s.state === 'running' ? s.pid : undefined;
      }, 15_000)));
      const code = await d.stop(20_000, signal);
      assert.is(code, 0, 'daemon exit code');
      for (const pid of pids) assert.not.ok(alive(pid), `server ${pid} left running`);
      // Graceful: the demo server logged the watchdog's reason before exiting (echoed into the daemon log).
      assert.match(d.log(), /Watchdog shutting down/);
    } finally {
      await d.stop();
      await d.cleanup();
    }
  });
}

test.run();
