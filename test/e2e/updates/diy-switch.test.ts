import { execFile } from 'node:child_process';
import { mkdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startDaemon, type RunningDaemon } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir } from '../../_support/env.ts';
import { layOutServerBuild, writeServerBuild } from '../../fixtures/builds/build.ts';
import { dataJson, instanceDir, logSince, reported, runningBuild, TOKEN, updatesConfig } from './_support.ts';

/**
 * The do-it-yourself two-directory switch with the real daemon (issue 4, Done-when 3; Build item 7):
 * `docs/switch/setup.sh` prepares the instance, the operator unpacks a build into `inactiveBin/` exactly as
 * docs/diy-updates.md says, runs `./switch`, and the Dummy instance restarts on the other directory.
 */

const run = promisify(execFile);
const KEY = 'diy';

interface Ctx {
  root: string;
  port: number;
  dir: string;
  zipB: string;
  d: RunningDaemon;
  cleanup: () => Promise<void>;
}

const test = suite<Ctx>('e2e updates :: DIY two-directory switch (Dummy)', {} as Ctx);

test.before(
  reported(async (ctx) => {
    const tmp = await tempDir('wd-e2e-diy-');
    ctx.root = tmp.path;
    ctx.cleanup = tmp.cleanup;
    const wd = join(tmp.path, 'wd');
    await mkdir(wd);
    ctx.dir = join(wd, 'instances', KEY);
    await run('sh', [join(ROOT, 'docs/switch/setup.sh'), ctx.dir]);
    await layOutServerBuild(join(ctx.dir, 'serverA'), 'SA');
    ctx.zipB = (await writeServerBuild(join(tmp.path, 'SS14.Server_linux-x64.zip'), 'SB')).path;
    ctx.port = await freePort();
    ctx.d = await startDaemon(
      updatesConfig([{ key: KEY, port: ctx.port, updateType: 'Dummy', runCommand: 'currentServer' }]),
      { dir: wd },
    );
  }),
);

test.after(async (ctx) => {
  await ctx.d?.stop();
  await ctx.cleanup?.();
});

/** What docs/diy-updates.md tells the operator to type, in the instance folder. */
async function operator(ctx: Ctx, script: string): Promise<{ stdout: string; stderr: string }> {
  return run('sh', ['-c', script], {
    cwd: ctx.dir,
    timeout: 20_000,
    env: { ...process.env, WATCHDOG_URL: ctx.d.url, WATCHDOG_KEY: KEY, WATCHDOG_TOKEN: TOKEN },
  });
}

test('serverA runs as revision 1 through the currentServer link', async (ctx) => {
  const { status, server } = await runningBuild(ctx.d, KEY, ctx.port, 'SA');
  assert.is(status.revision, '1');
  assert.is(server.cwd, instanceDir(ctx.d, KEY));
  assert.is(await readlink(join(ctx.dir, 'currentServer')), 'serverA/Robust.Server');
});

test('unpack B into inactiveBin/, ./switch: the server restarts on serverB as revision 2', async (ctx) => {
  const before = await runningBuild(ctx.d, KEY, ctx.port, 'SA');
  const from = ctx.d.log().length;
  const out = await operator(
    ctx,
    [
      'rm -rf inactiveBin/*',
      `unzip -q "${ctx.zipB}" -d inactiveBin/`,
      'chmod +x inactiveBin/Robust.Server',
      './switch',
    ].join(' && '),
  );
  assert.match(out.stdout, /serverB is now active/);
  const after = await runningBuild(ctx.d, KEY, ctx.port, 'SB', { notPid: before.status.pid });
  assert.match(logSince(ctx.d, from), /build SA: update requested/, 'the old server left on /update');
  assert.is(after.status.revision, '2');
  assert.is((await dataJson(ctx.d, KEY)).revision, '2');
  assert.is(await readlink(join(ctx.dir, 'inactiveBin')), 'serverA');
});

test('./switch again goes back to serverA (revision 3)', async (ctx) => {
  const before = await runningBuild(ctx.d, KEY, ctx.port, 'SB');
  await operator(ctx, './switch');
  const after = await runningBuild(ctx.d, KEY, ctx.port, 'SA', { notPid: before.status.pid });
  assert.is(after.status.revision, '3');
  assert.is(await readlink(join(ctx.dir, 'currentServer')), 'serverA/Robust.Server');
});

test.run();
