import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { chooseArtifact, createCiServerProvider } from '../../../src/updates/providers/ci-server.ts';
import { tempDir } from '../../_support/env.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { startCdn, type Cdn } from '../../fixtures/archives/serve.ts';

interface Ctx {
  root: string;
  inst: string;
  cdn: Cdn;
  cleanup: () => Promise<void>;
}

const JOB = '/job/Space%20Station';
const never = () => new AbortController().signal;
const read = (path: string) => readFile(path, 'utf8');

async function setup(ctx: Ctx): Promise<void> {
  const tmp = await tempDir();
  ctx.root = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.inst = join(tmp.path, 'instances', 'alpha');
  await mkdir(join(ctx.inst, 'bin'), { recursive: true });
  await writeFile(join(ctx.inst, 'bin', 'marker'), 'old build');
  ctx.cdn = await startCdn();
}

async function teardown(ctx: Ctx): Promise<void> {
  await ctx.cdn?.close();
  await ctx.cleanup?.();
}

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
          DownloadTimeoutSeconds: 5,
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

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, UpdateError);
    assert.match((err as Error).message, pattern);
    return;
  }
  throw new Error(`expected a refusal matching ${pattern}`);
}

async function untouched(ctx: Ctx): Promise<void> {
  assert.equal(await readdir(join(ctx.inst, 'bin')), ['marker']);
  assert.equal(await readdir(join(ctx.inst, '.update')).catch(() => []), []);
}

// ---

const ci = suite<Ctx>('ci-server provider', {} as Ctx);
ci.before.each(setup);
ci.after.each(teardown);

ci('ci-server :: the last successful build number is the revision', async (ctx) => {
  job(ctx, 42, []);
  assert.equal(await provider(ctx).check(null, never()), { available: true, revision: '42' });
  assert.equal(await provider(ctx).check('42', never()), { available: false, revision: '42' });
  assert.equal(await provider(ctx).check('41', never()), { available: true, revision: '42' });
});

ci("ci-server :: installs the server archive for this platform from the build's artifact list", async (ctx) => {
  const archive = join(ctx.root, 'linux.zip');
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
  const archive = join(ctx.root, 'linux.zip');
  await writeZip(archive, sampleBuild('CI7'));
  job(ctx, 7);
  ctx.cdn.set(`${JOB}/7/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive });
  assert.is(await provider(ctx).apply(null, never()), '7');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'CI7');
});

ci('ci-server :: ArtifactPattern picks a differently named tar.gz', async (ctx) => {
  const archive = join(ctx.root, 'game.tar.gz');
  await writeTar(archive, sampleBuild('T'), { gzip: true });
  job(ctx, 3, [art('game-server-linux-x64.tar.gz'), art('SS14.Server_linux-x64.zip')]);
  ctx.cdn.set(`${JOB}/3/artifact/release/game-server-linux-x64.tar.gz`, { kind: 'file', file: archive });
  assert.is(await provider(ctx, { ArtifactPattern: 'game-server-{rid}.tar.gz' }).apply(null, never()), '3');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'T');
});

ci.run();

// ---

const bad = suite<Ctx>('ci-server failures', {} as Ctx);
bad.before.each(setup);
bad.after.each(teardown);

bad('ci-server :: a job API error fails the check', async (ctx) => {
  ctx.cdn.set(`${JOB}/api/json`, { kind: 'status', status: 503 });
  await refused(provider(ctx).check(null, never()), /CI job at .*\/job\/Space%20Station\/api\/json answered HTTP 503/);
});

bad('ci-server :: no successful build yet', async (ctx) => {
  job(ctx, null);
  await refused(provider(ctx).check(null, never()), /has no successful build yet/);
});

bad('ci-server :: the artifact must answer 2xx', async (ctx) => {
  job(ctx, 5, [art('SS14.Server_linux-x64.zip')]);
  await refused(provider(ctx).apply(null, never()), /answered HTTP 404/);
  await untouched(ctx);
});

bad('ci-server :: no archive for this platform names what the build has', async (ctx) => {
  job(ctx, 5, [art('SS14.Server_win-x64.zip'), art('SS14.Client.zip')]);
  await refused(
    provider(ctx).apply(null, never()),
    /no server archive for this platform linux-x64 .*artifacts: SS14\.Server_win-x64\.zip, SS14\.Client\.zip/,
  );
  await untouched(ctx);
});

bad('ci-server :: an archive that does not extract is refused (no hash to check)', async (ctx) => {
  const archive = join(ctx.root, 'bad.zip');
  await writeFile(archive, 'this is not a zip at all, just text that a proxy served');
  job(ctx, 5, [art('SS14.Server_linux-x64.zip')]);
  ctx.cdn.set(`${JOB}/5/artifact/release/SS14.Server_linux-x64.zip`, { kind: 'file', file: archive });
  await refused(provider(ctx).apply(null, never()), /not a zip, tar or tar\.gz archive/);
  await untouched(ctx);
});

bad('ci-server :: missing BaseUrl or JobName is a clear error', async (ctx) => {
  await refused(
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
