import { execFile } from 'node:child_process';
import { readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { type DaemonCtx, daemonSuite } from '../../_support/daemon.ts';
import { freePort, ROOT } from '../../_support/env.ts';
import { layOutServerBuild, writeServerBuild } from '../../fixtures/builds/build.ts';
import { dataJson, instanceDir, logSince, runningBuild, TOKEN, updatesConfig } from '../_support/updates.ts';

/**
 * The do-it-yourself two-directory switch with the real daemon:
 * `docs/switch/setup.sh` prepares the instance, the operator unpacks a build into `inactiveBin/` exactly as
 * docs/diy-updates.md says, runs `./switch`, and the Dummy instance restarts on the other directory.
 */

const run = promisify(execFile);
const KEY = 'diy';

/** The instance's folder, its ApiPort, and build B's archive for the operator to unpack. */
interface Instance {
  instance: string;
  port: number;
  zipB: string;
}

const test = daemonSuite<Instance>('e2e updates :: DIY two-directory switch (Dummy)', {
  prefix: 'wd-e2e-diy-',
  ctx: { port: 0, instance: '', zipB: '' },
  config: async (ctx) => {
    ctx.instance = join(ctx.dir, 'instances', KEY);
    await run('sh', [join(ROOT, 'docs/switch/setup.sh'), ctx.instance]);
    await layOutServerBuild(join(ctx.instance, 'serverA'), 'SA');
    ctx.zipB = (await writeServerBuild(join(ctx.dir, 'SS14.Server_linux-x64.zip'), 'SB')).path;
    ctx.port = await freePort();
    return updatesConfig([{ key: KEY, port: ctx.port, updateType: 'Dummy', runCommand: 'currentServer' }]);
  },
});
type Ctx = DaemonCtx & Instance;

/** What docs/diy-updates.md tells the operator to type, in the instance folder. */
async function operator(ctx: Ctx, script: string): Promise<{ stdout: string; stderr: string }> {
  return run('sh', ['-c', script], {
    cwd: ctx.instance,
    timeout: 20_000,
    env: { ...process.env, WATCHDOG_URL: ctx.daemon!.url, WATCHDOG_KEY: KEY, WATCHDOG_TOKEN: TOKEN },
  });
}

test('diy-switch :: serverA runs as revision 1 through the currentServer link', async (ctx) => {
  const { status, server } = await runningBuild(ctx.daemon!, KEY, ctx.port, 'SA');
  assert.is(status.revision, '1');
  assert.is(server.cwd, instanceDir(ctx.daemon!, KEY));
  assert.is(await readlink(join(ctx.instance, 'currentServer')), 'serverA/Robust.Server');
});

test('diy-switch :: unpack B into inactiveBin/, ./switch: the server restarts on serverB as revision 2', async (ctx) => {
  const before = await runningBuild(ctx.daemon!, KEY, ctx.port, 'SA');
  const from = ctx.daemon!.log().length;
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
  const after = await runningBuild(ctx.daemon!, KEY, ctx.port, 'SB', { notPid: before.status.pid });
  assert.match(logSince(ctx.daemon!, from), /build SA: update requested/, 'the old server left on /update');
  assert.is(after.status.revision, '2');
  assert.is((await dataJson(ctx.daemon!, KEY)).revision, '2');
  assert.is(await readlink(join(ctx.instance, 'inactiveBin')), 'serverA');
});

test('diy-switch :: ./switch again goes back to serverA (revision 3)', async (ctx) => {
  const before = await runningBuild(ctx.daemon!, KEY, ctx.port, 'SB');
  await operator(ctx, './switch');
  const after = await runningBuild(ctx.daemon!, KEY, ctx.port, 'SA', { notPid: before.status.pid });
  assert.is(after.status.revision, '3');
  assert.is(await readlink(join(ctx.instance, 'currentServer')), 'serverA/Robust.Server');
});

test.run();
