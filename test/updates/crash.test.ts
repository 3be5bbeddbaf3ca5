import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { recoverInterruptedInstall } from '../../src/updates/install/install.ts';
import { ROOT, waitFor } from '../_support/env.ts';
import { type EntrySpec, writeZip } from '../fixtures/archives/build.ts';
import type { Route } from '../fixtures/archives/serve.ts';
import { type CdnCtx, cdnSuite, exists, oldBuildInBin, sha256Of } from './_support/instance-suite.ts';

/**
 * The process installing an update dies by SIGKILL (as the daemon would) mid-download and mid-extract; the
 * start-up recovery must leave the old build in bin/ and no leftovers.
 */

interface Ctx extends CdnCtx {
  child?: ChildProcess;
}

const test = cdnSuite<{ child?: ChildProcess }>('install crash', {
  after: (ctx) => {
    if (ctx.child && ctx.child.exitCode === null && ctx.child.signalCode === null) ctx.child.kill('SIGKILL');
    ctx.child = undefined;
  },
});

async function serve(ctx: Ctx, archive: string, route?: Route): Promise<void> {
  const sha256 = await sha256Of(archive);
  ctx.cdn.set('/build.zip', route ?? { kind: 'file', file: archive });
  ctx.cdn.set('/manifest.json', {
    kind: 'json',
    body: {
      builds: {
        B: { time: '2024-01-01T00:00:00Z', server: { 'linux-x64': { url: ctx.cdn.url('/build.zip'), sha256 } } },
      },
    },
  });
}

function startInstall(ctx: Ctx): ChildProcess & { stderrText: () => string } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/fixtures/archives/install-child.ts'), ctx.inst, ctx.cdn.url('/manifest.json')],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  ctx.child = child;
  return Object.assign(child, { stderrText: () => stderr });
}

/**
 * Waits (60 s: a child through tsx starts slowly beside a busy core) for `check` while the install runs; an
 * install that ended first fails at once, with what it said.
 */
function whileInstalling<T>(
  child: ReturnType<typeof startInstall>,
  what: string,
  check: () => Promise<T>,
  everyMs = 25,
) {
  return waitFor(
    what,
    async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the install ended first (${child.exitCode ?? child.signalCode}): ${child.stderrText()}`);
      return check();
    },
    60_000,
    everyMs,
  );
}

async function killAndWait(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
  assert.is(child.signalCode, 'SIGKILL', 'the install was still running when killed');
}

async function recoveredToOldBuild(ctx: Ctx): Promise<void> {
  await recoverInterruptedInstall(ctx.inst);
  await oldBuildInBin(ctx.inst);
  assert.not.ok(await exists(join(ctx.inst, '.update')), 'leftovers removed');
}

test('install crash :: SIGKILL mid-download, then start-up recovery', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: 'Robust.Server', content: 'x'.repeat(200_000), store: true }]);
  await serve(ctx, archive, { kind: 'stall', file: archive, sendBytes: 50_000 });
  const child = startInstall(ctx);
  const part = join(ctx.inst, '.update', 'download.part');
  await whileInstalling(
    child,
    'a partial download',
    async () => ((await stat(part).catch(() => null))?.size ?? 0) >= 50_000,
  );
  await killAndWait(child);
  assert.ok((await stat(part)).size > 0, 'the crash left a partial download behind');
  await recoveredToOldBuild(ctx);
});

test('install crash :: SIGKILL mid-extract, then start-up recovery', async (ctx) => {
  // Thousands of small entries make extraction last long enough to be caught in the act. Stored, not deflated:
  // yazl deflates each entry in a zlib stream of its own, 4 CPU-s for these 4,000.
  const entries: EntrySpec[] = [{ name: 'Robust.Server', content: '#!/bin/sh\n' }];
  for (let i = 0; i < 4000; i++) {
    entries.push({ name: `Resources/f${i % 40}/file${i}.txt`, content: `file ${i}`, store: true });
  }
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, entries);
  await serve(ctx, archive);
  const child = startInstall(ctx);
  const scratch = join(ctx.inst, '.update');
  const staging = await whileInstalling(
    child,
    'a staging folder with extracted files',
    async () => {
      const name = (await readdir(scratch).catch(() => [])).find((n) => n.startsWith('staging-'));
      return name && (await readdir(join(scratch, name, 'Resources')).catch(() => [])).length > 0 ? name : undefined;
    },
    5,
  );
  await killAndWait(child);
  assert.ok(await exists(join(scratch, staging)), 'the crash left a staging folder behind');
  await recoveredToOldBuild(ctx);
});

test.run();
