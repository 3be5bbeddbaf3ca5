/** The Git provider suites' set-up: an empty instance folder and a bare repository with one commit. Not a test file. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { GitTimeouts } from '../../../../src/updates/git/repo.ts';
import type { UpdateProvider } from '../../../../src/updates/provider.ts';
import { createGitProvider } from '../../../../src/updates/providers/git.ts';
import { providerContext } from '../../../fixtures/git/context.ts';
import { createGitFixture, type GitFixture } from '../../../fixtures/git/repo.ts';
import {
  type Empty,
  exists,
  type InstanceCtx,
  instanceSuite,
  read,
  type SuiteOptions,
  sha256Of,
} from '../../_support/instance-suite.ts';

export interface GitCtx extends InstanceCtx {
  repo: GitFixture & { first: string };
}

/** An instanceSuite (instance folder empty: no old build) whose tests each get a fresh repository as `ctx.repo`. */
export function gitSuite<C extends object = Empty>(
  name: string,
  opts: Omit<SuiteOptions<C, C & GitCtx>, 'instance'> = {},
): Test<C & GitCtx> {
  const { before } = opts;
  return instanceSuite<C & Pick<GitCtx, 'repo'>>(name, {
    ...opts,
    instance: 'empty',
    ctx: { ...(opts.ctx as C), repo: undefined as unknown as GitCtx['repo'] },
    before: async (ctx) => {
      ctx.repo = await createGitFixture(ctx.dir);
      await before?.(ctx);
    },
  });
}

/** A Git provider building from the suite's repository for linux-x64, with these Updates settings on top. */
export function gitProvider(ctx: GitCtx, updates: Record<string, unknown> = {}, timeouts?: Partial<GitTimeouts>) {
  const pctx = providerContext({
    dir: ctx.inst,
    settings: { UpdateType: 'Git', Updates: { BaseUrl: ctx.repo.bare, Platform: 'linux-x64', ...updates } },
  });
  return { pctx, provider: createGitProvider(pctx, { timeouts }) };
}

/**
 * A non-hybrid build at `revision` published its client `zip` alone in binaries/ (moved out of the checkout, not
 * copied); launches get cvars for it, and bin/build.json, which the engine fills its empty build.* cvars from, names
 * it with the commit and the repository (so /info reports them).
 */
export async function clientPublished(ctx: GitCtx, provider: UpdateProvider, revision: string, zip: string) {
  assert.equal(await readdir(join(ctx.inst, 'binaries')), [zip]);
  assert.not.ok(await exists(join(ctx.inst, 'source', 'release', zip)), 'moved, not copied');
  const hash = (await sha256Of(join(ctx.inst, 'binaries', zip))).toUpperCase();
  const download = `http://watchdog.example:5000/instances/alpha/binaries/${zip}`;
  assert.equal(await provider.launchCvars?.(revision), [
    ['build.download_url', download],
    ['build.hash', hash],
    ['build.version', revision],
  ]);
  assert.equal(JSON.parse(await read(join(ctx.inst, 'bin', 'build.json'))), {
    download,
    hash,
    version: revision,
    engine_version: '',
    fork_id: ctx.repo.bare,
  });
}
