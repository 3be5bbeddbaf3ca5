/** The Git provider suites' set-up: an empty instance folder and a bare repository with one commit. Not a test file. */
import type { Test } from 'uvu';
import { createGitProvider } from '../../../src/updates/providers/git.ts';
import type { GitTimeouts } from '../../../src/updates/git/repo.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { createGitFixture, type GitFixture } from '../../fixtures/git/repo.ts';
import { type InstanceCtx, instanceSuite, type SuiteOptions } from '../_support.ts';

export interface GitCtx extends InstanceCtx {
  repo: GitFixture & { first: string };
}

type Empty = Record<never, never>;

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
