import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { runMain } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, statusOf, waitStatus } from '../resilience/_support/daemon-crash.ts';

/** A RunCommand that cannot be executed is a startup failure (the real watchdog idles instead), never a daemon problem. */
const test = daemonSuite('e2e :: faults: RunCommand missing or not executable', {
  prefix: 'wd-runcmd-',
  ctx: { notExecutable: '', okPid: null as number | null },
  config: async (ctx) => {
    ctx.notExecutable = join(ctx.dir, 'server.sh');
    await writeFile(ctx.notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    return testConfig({
      instances: [
        { key: 'missing', port: await freePort(), runCommand: join(ctx.dir, 'no/such/server') },
        { key: 'noexec', port: await freePort(), runCommand: ctx.notExecutable },
        { key: 'ok', port: await freePort(), runCommand: fixture('echo-env.mjs') },
      ],
    });
  },
  // The healthy server's pid, read while the daemon still answers: killed after it stops, should it linger.
  stopping: async (ctx) => {
    ctx.okPid = (await statusOf(ctx.daemon!, 'ok', 'tok').catch(() => null))?.pid ?? null;
  },
  after: (ctx) => killGroup(ctx.okPid),
});

for (const [key, code, why] of [
  ['missing', 'ENOENT', 'file not found'],
  ['noexec', 'EACCES', 'permission denied \\(is it executable\\?\\)'],
] as const) {
  test(`run-command :: ${key}: three startup failures, then stopped.failing with a clear log line; the daemon is fine`, async (ctx) => {
    const d = ctx.daemon!;
    const s = await waitStatus(d, key, 'tok', 'stopped.failing', (st) => st.state === 'stopped.failing', 20_000);
    assert.is(s.startupFailures, 3);
    assert.is(s.pid, null);
    const program = key === 'missing' ? join(ctx.dir, 'no/such/server') : ctx.notExecutable;
    const line = new RegExp(
      `\\[watchdog:${key}\\] launch failed .*cannot launch ${program.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ${code} \\(${why}\\) — check RunCommand`,
    );
    assert.match(d.log(), line);
    // The reason is in the status, where the CLI, the card and chat read it; no server ran, so no restart counted.
    const exit = (s as { lastExit?: { reason: string; detail: string | null } }).lastExit;
    assert.is(exit?.reason, 'launch-failed');
    assert.match(exit?.detail ?? '', new RegExp(`: ${code} \\(${why}\\) — check RunCommand$`));
    assert.is((s as { restarts?: number }).restarts, 0, 'RESTARTS counts runs, and none started');
    const cli = await runMain(['status', key, '--url', d.url, '--token', 'tok'], { cwd: ctx.dir });
    assert.match(cli.stdout, `${key} last exit: cannot launch ${program}: ${code}`);
    assert.match(cli.stdout, /launch-failed \d+s ago/);
    assert.is((await fetch(`${d.url}/health`)).status, 200, 'daemon alive');
    await waitStatus(d, 'ok', 'tok', 'the healthy instance running', running);
  });
}

test.run();
