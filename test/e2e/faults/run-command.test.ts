import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { startDaemon, type RunningDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, waitStatus, statusOf } from '../resilience/_support.ts';

/** A RunCommand that cannot be executed is a startup failure (the real watchdog idles instead), never a daemon problem. */
interface Ctx {
  d: RunningDaemon | null;
  dir: string;
  cleanup: () => Promise<void>;
  notExecutable: string;
}
const test = suite<Ctx>('e2e :: faults: RunCommand missing or not executable', {
  d: null,
  dir: '',
  cleanup: async () => {},
  notExecutable: '',
});

test.before(async (ctx) => {
  const tmp = await tempDir('wd-runcmd-');
  ctx.dir = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.notExecutable = join(tmp.path, 'server.sh');
  await writeFile(ctx.notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  ctx.d = await startDaemon(
    testConfig({
      instances: [
        { key: 'missing', port: await freePort(), runCommand: join(tmp.path, 'no/such/server') },
        { key: 'noexec', port: await freePort(), runCommand: ctx.notExecutable },
        { key: 'ok', port: await freePort(), runCommand: fixture('echo-env.mjs') },
      ],
    }),
    { dir: ctx.dir },
  );
});

test.after(async (ctx) => {
  const pid = ctx.d ? (await statusOf(ctx.d, 'ok', 'tok').catch(() => null))?.pid : null;
  await ctx.d?.stop();
  killGroup(pid);
  await ctx.cleanup();
});

for (const [key, code, why] of [
  ['missing', 'ENOENT', 'file not found'],
  ['noexec', 'EACCES', 'permission denied \\(is it executable\\?\\)'],
] as const) {
  test(`${key}: three startup failures, then stopped.failing with a clear log line; the daemon is fine`, async (ctx) => {
    const d = ctx.d!;
    const s = await waitStatus(d, key, 'tok', 'stopped.failing', (st) => st.state === 'stopped.failing', 20_000);
    assert.is(s.startupFailures, 3);
    assert.is(s.pid, null);
    const program = key === 'missing' ? join(ctx.dir, 'no/such/server') : ctx.notExecutable;
    const line = new RegExp(
      `\\[watchdog:${key}\\] launch failed .*cannot launch ${program.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ${code} \\(${why}\\) — check RunCommand`,
    );
    assert.match(d.log(), line);
    assert.is((await fetch(`${d.url}/health`)).status, 200, 'daemon alive');
    await waitStatus(d, 'ok', 'tok', 'the healthy instance running', running);
  });
}

test.run();
