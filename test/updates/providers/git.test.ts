import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { GitTimeouts } from '../../../src/updates/git/repo.ts';
import { waitFor } from '../../_support/env.ts';
import { git } from '../../fixtures/git/repo.ts';
import { exists, never as live, processGone, read, rejects } from '../_support/instance-suite.ts';
import { clientPublished, gitProvider as engineless, type GitCtx, gitSuite } from './_support/git.ts';

/** These tests build with the fixture's build.sh, not the engine's packaging. */
const gitProvider = (ctx: GitCtx, updates: Record<string, unknown> = {}, timeouts?: Partial<GitTimeouts>) =>
  engineless(ctx, { BuildCommand: './build.sh', ...updates }, timeouts);

const flow = gitSuite('git', { prefix: 'wd-git-' });

flow('git :: installs commit 1, sees the push, installs commit 2 with commit 1 kept in bin.prev', async (ctx) => {
  const { provider, pctx } = gitProvider(ctx);
  assert.is(provider.type, 'Git');
  assert.equal(await provider.check(null, live()), { available: true, revision: ctx.repo.first });

  assert.is(await provider.apply(null, live()), ctx.repo.first);
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '1\n');
  assert.ok((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o100, 'server is executable');
  assert.match(await read(join(ctx.inst, 'logs', 'build.log')), /building for linux-x64 hybrid=true/);
  assert.not.ok(
    await exists(join(ctx.inst, 'source', 'release', 'server_linux-x64.zip')),
    'the installed archive is removed',
  );
  assert.ok(pctx.phases.some((p) => p.phase === 'extract') && pctx.phases.some((p) => p.phase === 'install'));
  assert.equal(await provider.check(ctx.repo.first, live()), { available: false, revision: ctx.repo.first });

  const second = await ctx.repo.commit({ VERSION: '2\n' }, 'version 2');
  assert.equal(await provider.check(ctx.repo.first, live()), { available: true, revision: second });
  assert.is(await provider.apply(ctx.repo.first, live()), second);
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '2\n');
  assert.is(await read(join(ctx.inst, 'bin.prev', 'VERSION')), '1\n');
  assert.equal(await provider.launchCvars?.(second), [], 'hybrid builds add no cvars');

  // Asked again at the same commit with bin/ present: no rebuild (the log is still the last build's).
  const log = await read(join(ctx.inst, 'logs', 'build.log'));
  assert.is(await provider.apply(second, live()), second);
  assert.is(await read(join(ctx.inst, 'logs', 'build.log')), log);
  assert.is(await read(join(ctx.inst, 'bin.prev', 'VERSION')), '1\n');
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
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '1\n');
  assert.not.ok(await exists(join(ctx.inst, 'bin.prev')));
  assert.match(await read(join(ctx.inst, 'logs', 'build.log')), /compiler exploded/);

  await ctx.repo.commit({ 'build.sh': '#!/bin/sh\necho "built nothing"\n' }, 'no artifact');
  await rejects(
    provider.apply(ctx.repo.first, live()),
    /no file matching Updates\.Artifact "release\/\*linux-x64\*\.zip"/,
  );
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '1\n');
});

flow('git :: an artifact left by an earlier build is not mistaken for this one', async (ctx) => {
  const { provider } = gitProvider(ctx, { Artifact: 'release/server_*.zip' });
  await provider.apply(null, live());
  // A stale archive from some earlier run, then a build that produces nothing.
  await ctx.repo.commit({ 'build.sh': '#!/bin/sh\ntrue\n', VERSION: '2\n' }, 'no artifact');
  await writeFile(join(ctx.inst, 'source', 'release', 'server_linux-x64.zip'), 'stale');
  await rejects(provider.apply(ctx.repo.first, live()), /no file matching/);
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '1\n');
});

flow('git :: a corrupted checkout is deleted and cloned again', async (ctx) => {
  const { provider, pctx } = gitProvider(ctx);
  await provider.apply(null, live());
  await writeFile(join(ctx.inst, 'source', '.git', 'HEAD'), 'garbage\n');
  await rm(join(ctx.inst, 'source', '.git', 'objects'), { recursive: true });
  const second = await ctx.repo.commit({ VERSION: '2\n' }, 'version 2');
  assert.is(await provider.apply(ctx.repo.first, live()), second);
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '2\n');
  assert.ok(pctx.log.records.some((r) => r.level === 'warn' && /cloning it again/.test(r.msg)));

  // A source/ folder that is no checkout at all.
  await rm(join(ctx.inst, 'source'), { recursive: true });
  await mkdir(join(ctx.inst, 'source', 'junk'), { recursive: true });
  const third = await ctx.repo.commit({ VERSION: '3\n' }, 'version 3');
  assert.is(await provider.apply(second, live()), third);
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '3\n');
});

flow('git :: a non-hybrid build publishes the client zip and launches get cvars for it', async (ctx) => {
  const { provider } = gitProvider(ctx, { HybridACZ: false });
  await rejects(provider.launchCvars?.(null) ?? Promise.resolve(), /no client zip/);
  const revision = await provider.apply(null, live());
  assert.match(await read(join(ctx.inst, 'logs', 'build.log')), /hybrid=false/);
  await clientPublished(ctx, provider, revision, 'Game.Client.zip');

  // The next build's client replaces the old one, even under another name.
  await ctx.repo.commit(
    { 'build.sh': (await read(join(ctx.repo.work, 'build.sh'))).replace('Game.Client.zip', 'Other.Client.zip') },
    'rename client',
  );
  const renamed = await provider.apply(revision, live());
  assert.equal(await readdir(join(ctx.inst, 'binaries')), ['Other.Client.zip']);
  const second = JSON.parse(await read(join(ctx.inst, 'bin', 'build.json'))) as Record<string, string>;
  assert.is(second.download, 'http://watchdog.example:5000/instances/alpha/binaries/Other.Client.zip');
  assert.is(second.version, renamed);
  assert.is.not(renamed, revision);
});

const buildsLogged = (pctx: { log: { records: Array<{ msg: string }> } }) =>
  pctx.log.records.filter((r) => r.msg === 'building').length;

flow('git :: check builds and stages the commit it offers; the install is only the swap', async (ctx) => {
  const { provider, pctx } = gitProvider(ctx, { HybridACZ: false });
  assert.is(provider.staged?.(), null);
  assert.equal(await provider.check(null, live()), { available: true, revision: ctx.repo.first });
  assert.is(provider.staged?.(), ctx.repo.first);
  assert.not.ok(await exists(join(ctx.inst, 'bin')), 'nothing installed by the check');
  assert.not.ok(await exists(join(ctx.inst, 'binaries')), 'the client is not published before its server');
  const scratch = (await readdir(join(ctx.inst, '.update'))).sort();
  assert.equal(scratch.length, 2, 'one staged folder and its client zip');
  assert.match(scratch[0] as string, /^client-Game\.Client\.zip$/);
  assert.is(await read(join(ctx.inst, '.update', scratch[1] as string, 'VERSION')), '1\n');
  const log = await read(join(ctx.inst, 'logs', 'build.log'));

  assert.is(await provider.apply(null, live()), ctx.repo.first);
  assert.is(buildsLogged(pctx), 1, 'no second build');
  assert.is(await read(join(ctx.inst, 'logs', 'build.log')), log, 'no second fetch or build');
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '1\n');
  await clientPublished(ctx, provider, ctx.repo.first, 'Game.Client.zip');
  assert.equal(await readdir(join(ctx.inst, '.update')), []);
  assert.is(provider.staged?.(), null);
});

flow('git :: a newer commit found later replaces the staged build', async (ctx) => {
  const { provider, pctx } = gitProvider(ctx, { HybridACZ: false });
  await provider.check(null, live());
  const second = await ctx.repo.commit({ VERSION: '2\n' }, 'version 2');
  assert.equal(await provider.check(null, live()), { available: true, revision: second });
  assert.is(provider.staged?.(), second);
  const scratch = (await readdir(join(ctx.inst, '.update'))).sort();
  assert.is(scratch.length, 2, 'the first build and its client are gone');
  assert.is(await read(join(ctx.inst, '.update', scratch[1] as string, 'VERSION')), '2\n');
  assert.is(await provider.apply(null, live()), second);
  assert.is(buildsLogged(pctx), 2);
  assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '2\n');
  await clientPublished(ctx, provider, second, 'Game.Client.zip');
});

flow('git :: check failures are UpdateErrors naming the problem', async (ctx) => {
  await rejects(gitProvider(ctx, { Branch: 'nope' }).provider.check(null, live()), /no branch "nope"/);
  await rejects(
    gitProvider(ctx, { BaseUrl: join(ctx.dir, 'missing.git') }).provider.check(null, live()),
    /git ls-remote .* exited with code/,
  );
  await rejects(
    gitProvider(ctx, { Branch: '--upload-pack=touch x' }).provider.check(null, live()),
    /not a valid branch name/,
  );
  await rejects(
    gitProvider(ctx, { BaseUrl: join(ctx.dir, 'missing.git') }).provider.apply(null, live()),
    /git ls-remote .* exited with code/,
  );
  // A clone that fails after the branch was found (here: too slow).
  await rejects(gitProvider(ctx, {}, { transferMs: 1 }).provider.apply(null, live()), /git clone/);
  assert.not.ok(await exists(join(ctx.inst, 'source')), 'a failed clone leaves nothing behind');
  assert.not.ok(await exists(join(ctx.inst, 'bin')));
});

flow('git :: a cancelled or overlong build is stopped with its children', async (ctx) => {
  const pidFile = join(ctx.dir, 'build.pid');
  await ctx.repo.commit({ 'build.sh': `#!/bin/sh\necho $$ > "${pidFile}"\necho started\nsleep 30\n` }, 'slow build');
  const ac = new AbortController();
  const { provider } = gitProvider(ctx);
  const started = Date.now();
  const applying = provider.apply(null, ac.signal);
  const pid = Number(await waitFor('the build to start', async () => (await read(pidFile).catch(() => '')).trim()));
  ac.abort(new Error('stop requested'));
  await rejects(applying, /cancelled/);
  assert.ok(Date.now() - started < 20_000);
  await waitFor('the build shell to be gone', () => processGone(pid));
  assert.not.ok(await exists(join(ctx.inst, 'bin')));

  await rm(pidFile);
  const slow = gitProvider(ctx, {}, { buildMs: 300 }).provider;
  await rejects(slow.apply(null, live()), /took longer than/);
});

flow('git :: submodules are checked out with the commit that names them', async (ctx) => {
  // git refuses file:// submodules unless told (CVE-2022-39253); the daemon reads the user's git config like git.
  const home = join(ctx.dir, 'home');
  await mkdir(home);
  await writeFile(join(home, '.gitconfig'), '[protocol "file"]\n\tallow = always\n');
  const realHome = process.env.HOME;
  process.env.HOME = home;
  try {
    const lib = join(ctx.dir, 'lib-work');
    await mkdir(lib);
    await git(lib, ['init', '-q', '--initial-branch=master']);
    await writeFile(join(lib, 'LIB'), 'engine 7\n');
    await git(lib, ['add', '-A']);
    await git(lib, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'lib']);
    await git(ctx.repo.work, ['submodule', 'add', '-q', lib, 'RobustToolbox']);
    const named = await ctx.repo.commit({ VERSION: '2\n' }, 'add the engine as a submodule');
    const { provider } = gitProvider(ctx);
    assert.is(await provider.apply(null, live()), named);
    assert.is(await read(join(ctx.inst, 'source', 'RobustToolbox', 'LIB')), 'engine 7\n');
    assert.is(await read(join(ctx.inst, 'bin', 'VERSION')), '2\n');
  } finally {
    process.env.HOME = realHome;
  }
});

flow.run();
