import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { MaintenanceStatus } from '../../../src/supervisor/status.ts';
import { type DaemonCtx, daemonSuite } from '../../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../../_support/env.ts';
import { writeZip } from '../../fixtures/archives/build.ts';
import { type Cdn, startCdn } from '../../fixtures/archives/serve.ts';
import { LAUNCHER, layOutServerBuild, writeServerBuild } from '../../fixtures/builds/build.ts';
import { createGitFixture, type GitFixture } from '../../fixtures/git/repo.ts';
import {
  builtLabel,
  dataJson,
  instanceDir,
  logSince,
  runningBuild,
  TOKEN,
  updatesConfig,
} from '../_support/updates.ts';

/**
 * Local, Git, CiServer and Dummy end to end: one daemon runs an instance of each, every one
 * launching a real server build; each test asks for an update the way an operator or a CI job would.
 */

/** The CI job's CDN, the Git repository and its first commit, each instance's ApiPort, Local's client zip. */
interface Sources {
  cdn: Cdn;
  repo: GitFixture;
  gitFirst: string;
  ports: Record<'local' | 'git' | 'ci' | 'dummy', number>;
  clientZip: Buffer;
}
type Ctx = DaemonCtx & Sources;

const JOB = '/job/Game%20Server';

/** The files of a build as a Git commit: the launcher is committed as launch.sh (made executable by the fixture). */
async function gitBuildFiles(label: string): Promise<Record<string, string>> {
  return {
    'launch.sh': LAUNCHER,
    'server.mjs': await readFile(join(ROOT, 'test/fixtures/builds/server.mjs'), 'utf8'),
    '_lib.mjs': await readFile(join(ROOT, 'test/fixtures/servers/_lib.mjs'), 'utf8'),
    'build.txt': `${label}\n`,
  };
}

/** The CI job's API: the last successful build is `n`, and its server archive is build `CI<n>`. */
async function ciBuild(ctx: Ctx, n: number): Promise<void> {
  const archive = await writeServerBuild(join(ctx.dir, 'ci', `CI${n}.zip`), `CI${n}`);
  ctx.cdn.set(`${JOB}/${n}/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive.path });
  ctx.cdn.set(`${JOB}/api/json`, {
    kind: 'json',
    body: { name: 'Game Server', lastSuccessfulBuild: { number: n, url: 'x' } },
  });
}

const test = daemonSuite<Sources>('e2e updates :: Local, Git, CiServer and Dummy through the daemon', {
  prefix: 'wd-e2e-providers-',
  ctx: {} as Sources,
  config: async (ctx) => {
    ctx.cdn = await startCdn();
    ctx.ports = { local: await freePort(), git: await freePort(), ci: await freePort(), dummy: await freePort() };

    // Local: the operator put build L into bin/ and the client zip into binaries/.
    const local = join(ctx.dir, 'instances', 'local');
    await layOutServerBuild(join(local, 'bin'), 'L');
    await writeZip(join(local, 'binaries', 'SS14.Client.zip'), [{ name: 'client.txt', content: 'the client' }]);
    ctx.clientZip = await readFile(join(local, 'binaries', 'SS14.Client.zip'));
    // Dummy: bin/ filled by hand too; updates only restart it.
    await layOutServerBuild(join(ctx.dir, 'instances', 'dummy', 'bin'), 'D');
    // Git: a bare repository whose build command zips the server files into release/.
    await mkdir(join(ctx.dir, 'git'));
    ctx.repo = await createGitFixture(join(ctx.dir, 'git'));
    ctx.gitFirst = await ctx.repo.commit(await gitBuildFiles('G1'), 'server build G1');
    const buildCommand = `mkdir -p release && "${process.execPath}" make-zip.mjs "release/Game.Server_$WATCHDOG_PLATFORM.zip" launch.sh:Robust.Server server.mjs _lib.mjs build.txt`;
    // CiServer: build 1 is the last successful one.
    await ciBuild(ctx, 1);

    return updatesConfig([
      { key: 'local', port: ctx.ports.local, updateType: 'Local', updates: { CurrentVersion: 'v1' } },
      {
        key: 'git',
        port: ctx.ports.git,
        updateType: 'Git',
        updates: { BaseUrl: ctx.repo.bare, Branch: 'master', BuildCommand: buildCommand, Platform: 'linux-x64' },
      },
      {
        key: 'ci',
        port: ctx.ports.ci,
        updateType: 'CiServer',
        updates: { BaseUrl: `${ctx.cdn.origin}/`, JobName: 'Game Server', Platform: 'linux-x64' },
      },
      { key: 'dummy', port: ctx.ports.dummy, updateType: 'Dummy' },
    ]);
  },
  after: (ctx) => ctx.cdn?.close(),
});

test('providers :: Local: runs the build in bin/, revision = CurrentVersion, launched with build.download_url and build.hash', async (ctx) => {
  const d = ctx.daemon!;
  const { status, server } = await runningBuild(d, 'local', ctx.ports.local, 'L');
  assert.is(status.revision, 'v1');
  assert.is((await dataJson(d, 'local')).revision, 'v1');
  const port = new URL(d.url).port;
  // No BaseUrl: the address the daemon listens on (Urls: http://127.0.0.1:0).
  const url = `http://127.0.0.1:${port}/instances/local/binaries/SS14.Client.zip`;
  const hash = createHash('sha256').update(ctx.clientZip).digest('hex').toUpperCase();
  const argv = server.argv.join(' ');
  assert.ok(argv.includes(`--cvar build.download_url=${url}`), argv);
  assert.ok(argv.includes(`--cvar build.hash=${hash}`), argv);
  // The same cvars in the process's own command line, as the kernel has it.
  const cmdline = (await readFile(`/proc/${server.pid}/cmdline`, 'utf8')).split('\0');
  assert.ok(cmdline.includes(`build.download_url=${url}`) && cmdline.includes(`build.hash=${hash}`));
  const res = await fetch(`${d.url}/instances/local/binaries/SS14.Client.zip`);
  assert.is(res.status, 200);
  assert.equal(Buffer.from(await res.arrayBuffer()), ctx.clientZip, 'the watchdog serves the client zip');
  // Nothing new (CurrentVersion unchanged): an update request leaves the server alone.
  const from = d.log().length;
  assert.is(await d.control('local', TOKEN, 'update'), 200);
  await waitFor('the check', () => /\[watchdog:local\] no update available/.test(logSince(d, from)), 10_000);
  assert.is((await d.status('local', TOKEN)).pid, status.pid);
});

test('providers :: Git: builds and runs commit 1; a push and POST /update build and run commit 2', async (ctx) => {
  const d = ctx.daemon!;
  const first = await runningBuild(d, 'git', ctx.ports.git, 'G1', { timeoutMs: 30_000 });
  assert.is(first.status.revision, ctx.gitFirst);
  assert.is((await dataJson(d, 'git')).revision, ctx.gitFirst);
  assert.ok((await stat(join(instanceDir(d, 'git'), 'source', '.git'))).isDirectory(), 'a checkout in source/');

  const second = await ctx.repo.commit({ 'build.txt': 'G2\n' }, 'server build G2');
  assert.is(await d.control('git', TOKEN, 'update'), 200);
  const after = await runningBuild(d, 'git', ctx.ports.git, 'G2', { notPid: first.status.pid, timeoutMs: 30_000 });
  assert.is(after.status.revision, second);
  assert.is((await dataJson(d, 'git')).revision, second);
  assert.is(await builtLabel(d, 'git', 'bin.prev'), 'G1');
  assert.ok(
    (await readFile(join(instanceDir(d, 'git'), 'logs', 'build.log'), 'utf8')).includes(`# staged ${second}`),
    'build output in logs/build.log',
  );
});

test('providers :: CiServer: runs the last successful build (1); build 2 succeeds, POST /update runs it', async (ctx) => {
  const d = ctx.daemon!;
  const first = await runningBuild(d, 'ci', ctx.ports.ci, 'CI1');
  assert.is(first.status.revision, '1');
  await ciBuild(ctx, 2);
  assert.is(await d.control('ci', TOKEN, 'update'), 200);
  const after = await runningBuild(d, 'ci', ctx.ports.ci, 'CI2', { notPid: first.status.pid });
  assert.is(after.status.revision, '2');
  assert.is((await dataJson(d, 'ci')).revision, '2');
  assert.is(await builtLabel(d, 'ci'), 'CI2');
  assert.is(await builtLabel(d, 'ci', 'bin.prev'), 'CI1');
  assert.ok(ctx.cdn.requests.some((r) => r.path === `${JOB}/2/artifact/release/SS14.Server_linux-x64.zip`));
});

test('providers :: CiServer: a held update is downloaded and staged at once; the release only swaps it in', async (ctx) => {
  const d = ctx.daemon!;
  const first = await runningBuild(d, 'ci', ctx.ports.ci, 'CI2');
  const artifact = `${JOB}/3/artifact/release/SS14.Server_linux-x64.zip`;
  const downloads = () => ctx.cdn.requests.filter((r) => r.path === artifact).length;
  const maintenance = async () => ((await d.status('ci', TOKEN)) as { maintenance?: MaintenanceStatus }).maintenance;
  assert.is(await d.control('ci', TOKEN, 'hold?minutes=5&reason=staging'), 200);
  await ciBuild(ctx, 3);
  assert.is(await d.control('ci', TOKEN, 'update'), 200);
  const held = await waitFor('the update to be staged and held', async () => {
    const m = await maintenance();
    return m?.staged === '3' && m.pending?.waitingFor === 'hold' ? m : null;
  });
  assert.is(held.pending?.action, 'update');
  assert.is(downloads(), 1, 'downloaded while held');
  assert.is((await d.status('ci', TOKEN)).pid, first.status.pid, 'the server plays on');
  assert.is(await builtLabel(d, 'ci'), 'CI2');
  assert.is(await d.control('ci', TOKEN, 'release'), 200);
  const after = await runningBuild(d, 'ci', ctx.ports.ci, 'CI3', { notPid: first.status.pid });
  assert.is(after.status.revision, '3');
  assert.is(downloads(), 1, 'the install did not download it again');
  assert.is((await maintenance())?.staged, null);
});

test('providers :: Dummy: revision 1 at start; POST /update restarts the server as revision 2, bin/ untouched', async (ctx) => {
  const d = ctx.daemon!;
  const first = await runningBuild(d, 'dummy', ctx.ports.dummy, 'D');
  assert.is(first.status.revision, '1');
  const marker = join(instanceDir(d, 'dummy'), 'bin', 'marker');
  await writeFile(marker, 'hand-made');
  const from = d.log().length;
  assert.is(await d.control('dummy', TOKEN, 'update'), 200);
  const after = await runningBuild(d, 'dummy', ctx.ports.dummy, 'D', { notPid: first.status.pid });
  assert.match(logSince(d, from), /build D: update requested/);
  assert.is(after.status.revision, '2');
  assert.is((await dataJson(d, 'dummy')).revision, '2');
  assert.is(await readFile(marker, 'utf8'), 'hand-made', 'Dummy touches no files');
});

test.run();
