import { existsSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, statusOf, waitStatus } from '../resilience/_support/daemon-crash.ts';
import { lastChat } from './_support/environment.ts';

/**
 * Removing `instances/<key>/logs/` while a chatty server ran ended the daemon with ENOENT at the next
 * rotation. Now the folder is recreated and the lines resume, rotation included, with the same server running.
 * With PersistServers the server keeps writing into the removed file: its lines are copied into the new one.
 */
for (const persist of [false, true]) {
  const test = daemonSuite(`e2e :: faults: logs/ removed under a chatty server (PersistServers ${persist})`, {
    prefix: 'wd-logsgone-',
    ctx: { pid: null as number | null },
    config: async () =>
      testConfig({
        persist,
        instances: [{ key: 'chatty', port: await freePort(), runCommand: fixture('chatty.mjs') }],
        // A small rotation size: the chatty server rotates its log every few hundred ms.
        extra: '  LogRetrySeconds: 0.2\nLogs:\n  ServerLogMaxBytes: 16384\n  ServerLogFiles: 3',
      }),
    after: (ctx) => killGroup(ctx.pid),
  });

  test('logs-removed :: the folder is recreated, lines and rotation resume, the server is never relaunched', async (ctx) => {
    const d = ctx.daemon!;
    const s = await waitStatus(d, 'chatty', 'tok', 'server.running', running);
    ctx.pid = s.pid;
    const logDir = join(ctx.dir, 'instances', 'chatty', 'logs');
    await waitFor('a rotation (server.log.1)', () => existsSync(join(logDir, 'server.log.1')), 10_000);

    for (let round = 1; round <= 2; round++) {
      // The daemon may write a file while rm empties the folder (ENOTEMPTY): rm tries again.
      await rm(logDir, { recursive: true, force: true, maxRetries: 10 });
      await waitFor(
        `round ${round}: logs/ recreated with new lines`,
        async () => (await lastChat(logDir)) > 0 && existsSync(join(logDir, 'server.log')),
        10_000,
      );
      await waitFor(`round ${round}: rotation works again`, () => existsSync(join(logDir, 'server.log.1')), 10_000);
    }
    if (persist) {
      // The server still writes into the removed file (its stdout): emptied at the rotation size, not left to grow.
      // Once it has written more than the bound below since now (1,000 lines of ~70 bytes), it must have been emptied.
      const from = await lastChat(logDir);
      await waitFor('1,000 more lines written', async () => (await lastChat(logDir)) > from + 1000, 10_000);
      const removed = statSync(`/proc/${s.pid}/fd/1`);
      assert.ok(removed.nlink === 0, 'the server writes into the removed file');
      assert.ok(removed.size < 16384 + 48 * 1024, `the removed file is bounded (${removed.size} bytes)`);
    }
    const after = await statusOf(d, 'chatty', 'tok');
    assert.is(after.pid, s.pid, 'the same server');
    assert.is(after.state, 'server.running');
    assert.is(d.proc.exitCode, null, 'the daemon is alive');
    assert.match(d.log(), /cannot write \S+server\.log \((ENOENT|ENOTDIR)\)/);
    assert.not.match(d.log(), /uncaught|unhandled/i);
  });

  test.run();
}
