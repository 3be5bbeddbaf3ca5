import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chooseArtifact, createCiServerProvider } from '../../../src/updates/providers/ci-server.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { type CdnCtx as Ctx, cdnSuite, never, oldBuildInBin, read, rejects } from '../_support/instance-suite.ts';

const JOB = '/job/Space%20Station';

function provider(ctx: Ctx, updates: Record<string, unknown> = {}) {
  return createCiServerProvider(
    providerContext({
      dir: ctx.inst,
      settings: {
        UpdateType: 'CiServer',
        Updates: {
          BaseUrl: `${ctx.cdn.origin}/`,
          JobName: 'Space Station',
          Platform: 'linux-x64',
          // A loopback transfer runs into this only when it stalls; a loaded machine can take seconds.
          DownloadTimeoutSeconds: 60,
          ...updates,
        },
      },
    }),
  );
}

/** A Jenkins-shaped job whose last successful build is `n`, listing `artifacts` (undefined: the build API answers 404). */
function job(ctx: Ctx, n: number | null, artifacts?: Array<{ fileName: string; relativePath: string }>): void {
  ctx.cdn.set(`${JOB}/api/json`, {
    kind: 'json',
    body: { name: 'Space Station', lastSuccessfulBuild: n === null ? null : { number: n, url: 'x' } },
  });
  if (n !== null && artifacts) ctx.cdn.set(`${JOB}/${n}/api/json`, { kind: 'json', body: { number: n, artifacts } });
}

const art = (fileName: string) => ({ fileName, relativePath: `release/${fileName}` });

/** Build `n` with its linux-x64 server zip (reading CI<n>) served where the artifact list says. */
async function serveBuild(ctx: Ctx, n: number): Promise<void> {
  const archive = join(ctx.dir, `ci${n}.zip`);
  await writeZip(archive, sampleBuild(`CI${n}`));
  job(ctx, n, [art('SS14.Server_linux-x64.zip')]);
  ctx.cdn.set(`${JOB}/${n}/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive });
}

/** How many artifact downloads the CI server was asked for. */
const downloads = (ctx: Ctx) => ctx.cdn.requests.filter((r) => r.path.includes('/artifact/')).length;

async function untouched(ctx: Ctx): Promise<void> {
  await oldBuildInBin(ctx.inst);
  assert.equal(await readdir(join(ctx.inst, '.update')).catch(() => []), []);
}

// ---

const ci = cdnSuite('ci-server provider');

ci('ci-server :: the last successful build number is the revision', async (ctx) => {
  await serveBuild(ctx, 42);
  assert.equal(await provider(ctx).check(null, never()), { available: true, revision: '42' });
  assert.equal(await provider(ctx).check('42', never()), { available: false, revision: '42' });
  assert.equal(await provider(ctx).check('41', never()), { available: true, revision: '42' });
});

ci('ci-server :: check downloads and stages the build it offers; the install is only the swap', async (ctx) => {
  await serveBuild(ctx, 42);
  const p = provider(ctx);
  assert.is(p.staged?.(), null);
  assert.equal(await p.check('41', never()), { available: true, revision: '42' });
  assert.is(p.staged?.(), '42');
  assert.is(downloads(ctx), 1);
  await oldBuildInBin(ctx.inst);
  const staging = await readdir(join(ctx.inst, '.update'));
  assert.is(staging.length, 1, 'one complete staged folder, no download left over');
  assert.is(await read(join(ctx.inst, '.update', staging[0] as string, 'build.txt')), 'CI42');
  // A second check of the same build reuses it; the install must not fetch it again, so its route goes.
  assert.equal(await p.check('41', never()), { available: true, revision: '42' });
  ctx.cdn.set(`${JOB}/42/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'status', status: 500 });
  assert.is(await p.apply('41', never()), '42');
  assert.is(downloads(ctx), 1);
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'CI42');
  assert.equal(await readdir(join(ctx.inst, '.update')), []);
  assert.is(p.staged?.(), null);
});

ci('ci-server :: a newer build found later replaces the staged one', async (ctx) => {
  await serveBuild(ctx, 42);
  const p = provider(ctx);
  await p.check(null, never());
  await serveBuild(ctx, 43);
  assert.equal(await p.check(null, never()), { available: true, revision: '43' });
  assert.is(p.staged?.(), '43');
  const staging = await readdir(join(ctx.inst, '.update'));
  assert.is(staging.length, 1, 'the build of 42 was removed');
  assert.is(await read(join(ctx.inst, '.update', staging[0] as string, 'build.txt')), 'CI43');
  assert.is(await p.apply(null, never()), '43');
  assert.is(downloads(ctx), 2);
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'CI43');
});

ci("ci-server :: installs the server archive for this platform from the build's artifact list", async (ctx) => {
  const archive = join(ctx.dir, 'linux.zip');
  await writeZip(archive, sampleBuild('CI42'));
  job(ctx, 42, [
    art('SS14.Client.zip'),
    art('SS14.Server_win-x64.zip'),
    art('SS14.Server_linux-x64.zip'),
    art('SS14.Server_linux-arm64.zip'),
  ]);
  ctx.cdn.set(`${JOB}/42/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive });
  assert.is(await provider(ctx).apply(null, never()), '42');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'CI42');
  assert.is(await read(join(ctx.inst, 'bin.prev', 'marker')), 'old build');
  assert.equal(await readdir(join(ctx.inst, '.update')), []);
});

ci('ci-server :: without an artifact list it uses release/SS14.Server_<rid>.zip', async (ctx) => {
  const archive = join(ctx.dir, 'linux.zip');
  await writeZip(archive, sampleBuild('CI7'));
  job(ctx, 7);
  ctx.cdn.set(`${JOB}/7/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive });
  assert.is(await provider(ctx).apply(null, never()), '7');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'CI7');
});

ci('ci-server :: ArtifactPattern picks a differently named tar.gz', async (ctx) => {
  const archive = join(ctx.dir, 'game.tar.gz');
  await writeTar(archive, sampleBuild('T'), { gzip: true });
  job(ctx, 3, [art('game-server-linux-x64.tar.gz'), art('SS14.Server_linux-x64.zip')]);
  ctx.cdn.set(`${JOB}/3/artifact/release/game-server-linux-x64.tar.gz`, { kind: 'file', file: archive });
  assert.is(await provider(ctx, { ArtifactPattern: 'game-server-{rid}.tar.gz' }).apply(null, never()), '3');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'T');
});

ci.run();

// ---

const bad = cdnSuite('ci-server failures');

bad('ci-server :: a job API error fails the check', async (ctx) => {
  ctx.cdn.set(`${JOB}/api/json`, { kind: 'status', status: 503 });
  await rejects(provider(ctx).check(null, never()), /CI job at .*\/job\/Space%20Station\/api\/json answered HTTP 503/);
});

bad('ci-server :: no successful build yet', async (ctx) => {
  job(ctx, null);
  await rejects(provider(ctx).check(null, never()), /has no successful build yet/);
});

bad('ci-server :: the artifact must answer 2xx', async (ctx) => {
  job(ctx, 5, [art('SS14.Server_linux-x64.zip')]);
  await rejects(provider(ctx).apply(null, never()), /answered HTTP 404/);
  await untouched(ctx);
});

bad('ci-server :: a build that cannot be downloaded fails the check and stages nothing', async (ctx) => {
  job(ctx, 5, [art('SS14.Server_linux-x64.zip')]);
  const p = provider(ctx);
  await rejects(p.check('4', never()), /answered HTTP 404/);
  assert.is(p.staged?.(), null);
  await untouched(ctx);
});

bad('ci-server :: no archive for this platform names what the build has', async (ctx) => {
  job(ctx, 5, [art('SS14.Server_win-x64.zip'), art('SS14.Client.zip')]);
  await rejects(
    provider(ctx).apply(null, never()),
    /no server archive for this platform linux-x64 .*artifacts: SS14\.Server_win-x64\.zip, SS14\.Client\.zip/,
  );
  await untouched(ctx);
});

bad('ci-server :: an archive that does not extract is refused (no hash to check)', async (ctx) => {
  const archive = join(ctx.dir, 'bad.zip');
  await writeFile(archive, 'this is not a zip at all, just text that a proxy served');
  job(ctx, 5, [art('SS14.Server_linux-x64.zip')]);
  ctx.cdn.set(`${JOB}/5/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive });
  await rejects(provider(ctx).apply(null, never()), /not a zip, tar or tar\.gz archive/);
  await untouched(ctx);
});

bad('ci-server :: missing BaseUrl or JobName is a clear error', async (ctx) => {
  await rejects(
    provider(ctx, { JobName: undefined }).check(null, never()),
    /lacks Updates\.BaseUrl or Updates\.JobName/,
  );
});

bad.run();

// ---

const choose = suite('chooseArtifact');

choose('chooseArtifact :: most specific platform first, client archives never', () => {
  const list = [art('SS14.Client_linux-x64.zip'), art('SS14.Server_linux.zip'), art('SS14.Server_linux-x64.zip')];
  assert.is(chooseArtifact(list, 'linux-x64', undefined), 'release/SS14.Server_linux-x64.zip');
  assert.is(chooseArtifact(list, 'linux-arm64', undefined), 'release/SS14.Server_linux.zip');
  assert.is(chooseArtifact(list, 'win-x64', undefined), undefined);
  assert.is(chooseArtifact([{ fileName: 'S_osx-arm64.zip' }], 'osx-arm64', undefined), 'release/S_osx-arm64.zip');
});

choose('chooseArtifact :: a pattern is filled with each fallback key; no list means the host RID', () => {
  assert.is(chooseArtifact([art('srv-unix.tgz')], 'linux-x64', 'srv-{rid}.tgz'), 'release/srv-unix.tgz');
  assert.is(chooseArtifact(undefined, 'linux-arm64', undefined), 'release/SS14.Server_linux-arm64.zip');
  assert.is(chooseArtifact(undefined, 'osx-x64', 'game_{rid}.tar.gz'), 'release/game_osx-x64.tar.gz');
});

choose.run();
