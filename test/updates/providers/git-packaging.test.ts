import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { createEngineTools, ENGINE_LAYOUT, type EngineTools, type StubCall } from '../../fixtures/git/engine-tools.ts';
import { exists, never as live, read } from '../_support/instance-suite.ts';
import { clientPublished, type GitCtx, gitProvider, gitSuite } from './_support/git.ts';

/**
 * The Git provider building engine repositories for real: the build runs stub `dotnet` and
 * `python3`/`python` programs found first on PATH, which record their arguments and write the archives the real
 * packaging would. No BuildCommand is configured, so nothing but the engine paths can produce a build.
 */

interface Ctx extends GitCtx {
  tools: EngineTools;
  restorePath: () => void;
}

/** Calls as `program arg…` lines, for readable comparisons. */
const lines = (calls: StubCall[]) => calls.map((c) => [c.program, ...c.args].join(' '));

const packaging = gitSuite('git-packaging', {
  prefix: 'wd-git-pkg-',
  ctx: { tools: undefined as unknown as EngineTools, restorePath: () => {} },
  before: async (ctx) => {
    ctx.tools = await createEngineTools(ctx.dir);
    ctx.restorePath = ctx.tools.onPath();
  },
  after: (ctx) => ctx.restorePath(),
});

const LAYOUT_COMMIT = { packaging: 'engine with Content.Packaging', python: 'engine with the packaging scripts' };

/**
 * Commits an engine `layout` and has a Git provider with these Updates settings install it from scratch: the commit
 * is what it reports, and `calls` what the stub tools were asked.
 */
async function installFrom(ctx: Ctx, layout: keyof typeof ENGINE_LAYOUT, updates: Record<string, unknown> = {}) {
  const head = await ctx.repo.commit(ENGINE_LAYOUT[layout], LAYOUT_COMMIT[layout]);
  const { provider, pctx } = gitProvider(ctx, updates);
  assert.is(await provider.apply(null, live()), head);
  return { head, provider, pctx, calls: await ctx.tools.calls() };
}

/** The installed build: its version and which packaging command made it; Robust.Server must be executable. */
async function installed(ctx: Ctx): Promise<{ version: string; packagedBy: string }> {
  const bin = join(ctx.inst, 'bin');
  assert.ok((await stat(join(bin, 'Robust.Server'))).mode & 0o100, 'Robust.Server is executable');
  return { version: await read(join(bin, 'VERSION')), packagedBy: (await read(join(bin, 'PACKAGED'))).trim() };
}

packaging(
  'git-packaging :: Content.Packaging: dotnet restore, build, and a hybrid server package get installed',
  async (ctx) => {
    const { head, provider, calls } = await installFrom(ctx, 'packaging');
    assert.equal(lines(calls), [
      'dotnet restore',
      'dotnet build Content.Packaging --configuration Release --no-restore /m',
      'dotnet run --project Content.Packaging server --platform linux-x64 --hybrid-acz',
    ]);
    for (const call of calls) {
      assert.is(call.cwd, join(ctx.inst, 'source'), 'runs in the checkout');
      assert.is(call.env.MSBUILDDISABLENODEREUSE, '1', 'no MSBuild nodes left holding the log open');
    }
    assert.equal(await installed(ctx), {
      version: '1\n',
      packagedBy: 'dotnet run --project Content.Packaging server --platform linux-x64 --hybrid-acz',
    });
    assert.not.ok(
      await exists(join(ctx.inst, 'source', 'release', 'SS14.Server_linux-x64.zip')),
      'the installed archive is removed',
    );
    assert.not.ok(await exists(join(ctx.inst, 'binaries')), 'a hybrid build publishes no client');
    assert.not.ok(
      await exists(join(ctx.inst, 'bin', 'build.json')),
      'nor build information: the server hosts its client itself',
    );
    assert.equal(await provider.launchCvars?.(head), []);
    assert.match(await read(join(ctx.inst, 'logs', 'build.log')), /\$ dotnet run --project Content\.Packaging server/);
  },
);

packaging(
  'git-packaging :: Content.Packaging without HybridACZ also packages the client, published in binaries/',
  async (ctx) => {
    // A BuildCommand that would fail: the engine's packaging wins over it, with a warning.
    const { head, pctx, calls } = await installFrom(ctx, 'packaging', { HybridACZ: false, BuildCommand: 'exit 7' });
    assert.equal(lines(calls).slice(2), [
      'dotnet run --project Content.Packaging server --platform linux-x64',
      'dotnet run --project Content.Packaging client --no-wipe-release',
    ]);
    assert.is((await installed(ctx)).packagedBy, 'dotnet run --project Content.Packaging server --platform linux-x64');
    assert.equal(await readdir(join(ctx.inst, 'binaries')), ['SS14.Client.zip']);
    const info = JSON.parse(await read(join(ctx.inst, 'bin', 'build.json'))) as Record<string, string>;
    assert.equal([info.version, info.fork_id], [head, ctx.repo.bare], 'the commit and the repository reach the server');
    assert.ok(pctx.log.records.some((r) => r.level === 'warn' && /BuildCommand is ignored/.test(r.msg)));
  },
);

packaging(
  'git-packaging :: Tools/package_server_build.py: python3 with --hybrid-acz -p <rid>, its archive installed',
  async (ctx) => {
    const { head, provider, calls } = await installFrom(ctx, 'python');
    // python3, not the real watchdog's `python` (src/updates/git/engine.ts says why); the `python` stub must stay unused.
    assert.equal(lines(calls), ['python3 Tools/package_server_build.py --hybrid-acz -p linux-x64']);
    assert.is(calls[0]?.cwd, join(ctx.inst, 'source'));
    assert.is(calls[0]?.env.PYTHONUNBUFFERED, '1');
    assert.is(calls[0]?.env.MSBUILDDISABLENODEREUSE, '1', 'the scripts run dotnet too');
    assert.equal(await installed(ctx), {
      version: '1\n',
      packagedBy: 'python3 Tools/package_server_build.py --hybrid-acz -p linux-x64',
    });
    assert.not.ok(await exists(join(ctx.inst, 'source', 'release', 'SS14.Server_linux-x64.zip')));
    assert.equal(await provider.launchCvars?.(head), []);

    // The next commit is built the same way and replaces the build.
    const second = await ctx.repo.commit({ VERSION: '2\n' }, 'version 2');
    assert.is(await provider.apply(head, live()), second);
    assert.is((await installed(ctx)).version, '2\n');
    assert.is(await read(join(ctx.inst, 'bin.prev', 'VERSION')), '1\n');
  },
);

packaging(
  'git-packaging :: the python scripts without HybridACZ: server -p <rid>, then the client script',
  async (ctx) => {
    const { head, provider, calls } = await installFrom(ctx, 'python', { HybridACZ: false });
    assert.equal(lines(calls), [
      'python3 Tools/package_server_build.py -p linux-x64',
      'python3 Tools/package_client_build.py',
    ]);
    assert.is((await installed(ctx)).packagedBy, 'python3 Tools/package_server_build.py -p linux-x64');
    await clientPublished(ctx, provider, head, 'SS14.Client.zip');
  },
);

packaging.run();
