import { createHash } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { createGitProvider } from '../../../src/updates/providers/git.ts';
import type { GitTimeouts } from '../../../src/updates/git/repo.ts';
import { tempDir, waitFor } from '../../_support/env.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { createGitFixture, type GitFixture } from '../../fixtures/git/repo.ts';

interface Ctx {
  root: string;
  dir: string;
  repo: GitFixture & { first: string };
  cleanup: () => Promise<void>;
}

const live = () => new AbortController().signal;
const read = (path: string) => readFile(path, 'utf8');
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

function gitProvider(ctx: Ctx, updates: Record<string, unknown> = {}, timeouts?: Partial<GitTimeouts>) {
  const pctx = providerContext({
    dir: ctx.dir,
    settings: {
      UpdateType: 'Git',
      Updates: { BaseUrl: ctx.repo.bare, Platform: 'linux-x64', BuildCommand: './build.sh', ...updates },
    },
  });
  return { pctx, provider: createGitProvider(pctx, { timeouts }) };
}

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, UpdateError);
    assert.match((err as Error).message, pattern);
    return err as Error;
  }
  return assert.unreachable(`expected an UpdateError matching ${pattern}`) as never;
}

const setup = async (ctx: Ctx) => {
  const tmp = await tempDir('wd-git-');
  ctx.root = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.dir = join(tmp.path, 'instances', 'alpha');
  await import('node:fs/promises').then((fs) => fs.mkdir(ctx.dir, { recursive: true }));
  ctx.repo = await createGitFixture(tmp.path);
};

// ---

const flow = suite<Ctx>('git', {} as Ctx);
flow.before.each(setup);
flow.after.each((ctx) => ctx.cleanup());

flow('git :: installs commit 1, sees the push, installs commit 2 with commit 1 kept in bin.prev', async (ctx) => {
  const { provider, pctx } = gitProvider(ctx);
  assert.is(provider.type, 'Git');
  assert.equal(await provider.check(null, live()), { available: true, revision: ctx.repo.first });

  assert.is(await provider.apply(null, live()), ctx.repo.first);
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '1\n');
  assert.ok((await stat(join(ctx.dir, 'bin', 'Robust.Server'))).mode & 0o100, 'server is executable');
  assert.match(await read(join(ctx.dir, 'logs', 'build.log')), /building for linux-x64 hybrid=true/);
  assert.not.ok(
    await exists(join(ctx.dir, 'source', 'release', 'server_linux-x64.zip')),
    'the installed archive is removed',
  );
  assert.ok(pctx.phases.some((p) => p.phase === 'extract') && pctx.phases.some((p) => p.phase === 'install'));
  assert.equal(await provider.check(ctx.repo.first, live()), { available: false, revision: ctx.repo.first });

  const second = await ctx.repo.commit({ VERSION: '2\n' }, 'version 2');
  assert.equal(await provider.check(ctx.repo.first, live()), { available: true, revision: second });
  assert.is(await provider.apply(ctx.repo.first, live()), second);
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '2\n');
  assert.is(await read(join(ctx.dir, 'bin.prev', 'VERSION')), '1\n');
  assert.equal(await provider.launchCvars?.(second), [], 'hybrid builds add no cvars');

  // Asked again at the same commit with bin/ present: no rebuild.
  assert.is(await provider.apply(second, live()), second);
  assert.not.match(await read(join(ctx.dir, 'logs', 'build.log')), /building for/);
  assert.is(await read(join(ctx.dir, 'bin.prev', 'VERSION')), '1\n');
});

flow('git :: a failing build or a missing artifact leaves bin/ as it was', async (ctx) => {
  const { provider } = gitProvider(ctx);
  await provider.apply(null, live());
  await ctx.repo.commit(
    { 'build.sh': '#!/bin/sh\necho "compiler exploded" >&2\nexit 3\n', VERSION: '2\n' },
    'broken build',
  );
  const err = await rejects(provider.apply(ctx.repo.first, live()), /exited with code 3/);
  assert.match(err.message, /compiler exploded/);
  assert.match(err.message, /build\.log/);
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '1\n');
  assert.not.ok(await exists(join(ctx.dir, 'bin.prev')));
  assert.match(await read(join(ctx.dir, 'logs', 'build.log')), /compiler exploded/);

  await ctx.repo.commit({ 'build.sh': '#!/bin/sh\necho "built nothing"\n' }, 'no artifact');
  await rejects(
    provider.apply(ctx.repo.first, live()),
    /no file matching Updates\.Artifact "release\/\*linux-x64\*\.zip"/,
  );
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '1\n');
});

flow('git :: an artifact left by an earlier build is not mistaken for this one', async (ctx) => {
  const { provider } = gitProvider(ctx, { Artifact: 'release/server_*.zip' });
  await provider.apply(null, live());
  // A stale archive from some earlier run, then a build that produces nothing.
  await ctx.repo.commit({ 'build.sh': '#!/bin/sh\ntrue\n', VERSION: '2\n' }, 'no artifact');
  await writeFile(join(ctx.dir, 'source', 'release', 'server_linux-x64.zip'), 'stale');
  await rejects(provider.apply(ctx.repo.first, live()), /no file matching/);
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '1\n');
});

flow('git :: a corrupted checkout is deleted and cloned again', async (ctx) => {
  const { provider, pctx } = gitProvider(ctx);
  await provider.apply(null, live());
  await writeFile(join(ctx.dir, 'source', '.git', 'HEAD'), 'garbage\n');
  await rm(join(ctx.dir, 'source', '.git', 'objects'), { recursive: true });
  const second = await ctx.repo.commit({ VERSION: '2\n' }, 'version 2');
  assert.is(await provider.apply(ctx.repo.first, live()), second);
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '2\n');
  assert.ok(pctx.log.records.some((r) => r.level === 'warn' && /cloning it again/.test(r.msg)));

  // A source/ folder that is no checkout at all.
  await rm(join(ctx.dir, 'source'), { recursive: true });
  await import('node:fs/promises').then((fs) => fs.mkdir(join(ctx.dir, 'source', 'junk'), { recursive: true }));
  const third = await ctx.repo.commit({ VERSION: '3\n' }, 'version 3');
  assert.is(await provider.apply(second, live()), third);
  assert.is(await read(join(ctx.dir, 'bin', 'VERSION')), '3\n');
});

flow('git :: a non-hybrid build publishes the client zip and launches get cvars for it', async (ctx) => {
  const { provider } = gitProvider(ctx, { HybridACZ: false });
  await rejects(provider.launchCvars?.(null) ?? Promise.resolve(), /no client zip/);
  const revision = await provider.apply(null, live());
  assert.match(await read(join(ctx.dir, 'logs', 'build.log')), /hybrid=false/);
  assert.equal(await readdir(join(ctx.dir, 'binaries')), ['Game.Client.zip']);
  assert.not.ok(await exists(join(ctx.dir, 'source', 'release', 'Game.Client.zip')), 'moved, not copied');
  const hash = createHash('sha256')
    .update(await readFile(join(ctx.dir, 'binaries', 'Game.Client.zip')))
    .digest('hex')
    .toUpperCase();
  assert.equal(await provider.launchCvars?.(revision), [
    ['build.download_url', 'http://watchdog.example:5000/instances/alpha/binaries/Game.Client.zip'],
    ['build.hash', hash],
    ['build.version', revision],
  ]);
  // What the engine fills its empty build.* cvars from, so /info reports the commit and the repository.
  assert.equal(JSON.parse(await read(join(ctx.dir, 'bin', 'build.json'))), {
    download: 'http://watchdog.example:5000/instances/alpha/binaries/Game.Client.zip',
    hash,
    version: revision,
    engine_version: '',
    fork_id: ctx.repo.bare,
  });

  // The next build's client replaces the old one, even under another name.
  await ctx.repo.commit(
    { 'build.sh': (await read(join(ctx.repo.work, 'build.sh'))).replace('Game.Client.zip', 'Other.Client.zip') },
    'rename client',
  );
  const renamed = await provider.apply(revision, live());
  assert.equal(await readdir(join(ctx.dir, 'binaries')), ['Other.Client.zip']);
  const second = JSON.parse(await read(join(ctx.dir, 'bin', 'build.json'))) as Record<string, string>;
  assert.is(second.download, 'http://watchdog.example:5000/instances/alpha/binaries/Other.Client.zip');
  assert.is(second.version, renamed);
  assert.is.not(renamed, revision);
});

flow('git :: check failures are UpdateErrors naming the problem', async (ctx) => {
  await rejects(gitProvider(ctx, { Branch: 'nope' }).provider.check(null, live()), /no branch "nope"/);
  await rejects(
    gitProvider(ctx, { BaseUrl: join(ctx.root, 'missing.git') }).provider.check(null, live()),
    /git ls-remote .* exited with code/,
  );
  await rejects(
    gitProvider(ctx, { Branch: '--upload-pack=touch x' }).provider.check(null, live()),
    /not a valid branch name/,
  );
  await rejects(gitProvider(ctx, { BaseUrl: join(ctx.root, 'missing.git') }).provider.apply(null, live()), /git clone/);
  assert.not.ok(await exists(join(ctx.dir, 'source')), 'a failed clone leaves nothing behind');
  assert.not.ok(await exists(join(ctx.dir, 'bin')));
});

flow('git :: a cancelled or overlong build is stopped with its children', async (ctx) => {
  const pidFile = join(ctx.root, 'build.pid');
  await ctx.repo.commit({ 'build.sh': `#!/bin/sh\necho $$ > "${pidFile}"\necho started\nsleep 30\n` }, 'slow build');
  const ac = new AbortController();
  const { provider } = gitProvider(ctx);
  const started = Date.now();
  const applying = provider.apply(null, ac.signal);
  const pid = Number(await waitFor('the build to start', async () => (await read(pidFile).catch(() => '')).trim()));
  ac.abort(new Error('stop requested'));
  await rejects(applying, /cancelled/);
  assert.ok(Date.now() - started < 20_000);
  await waitFor('the build shell to be gone', () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  assert.not.ok(await exists(join(ctx.dir, 'bin')));

  await rm(pidFile);
  const slow = gitProvider(ctx, {}, { buildMs: 300 }).provider;
  await rejects(slow.apply(null, live()), /took longer than/);
});

flow.run();
