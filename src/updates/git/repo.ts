import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { describeError, UpdateError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { lastLines, type RunOptions, type RunResult, runChild as runProcess } from '../../process/run-child.ts';
import { type GitRemote, gitEnv } from './remote.ts';

/*
 * The checkout in `<instance>/source`, as the real watchdog's `UpdateProviderGit.cs` keeps it: a shallow clone of one
 * branch, updated by fetch + hard reset + submodules; one git cannot work with is cloned again.
 */

/** The Git provider's child processes (git, the build): a failure to run is an UpdateError. */
export const runChild = (program: string, args: string[], opts: RunOptions): Promise<RunResult> =>
  runProcess(program, args, { ...opts, error: (message, options) => new UpdateError(message, options) });

/** Like `runChild`, but a non-zero exit is an UpdateError quoting the end of the output. */
export async function runChecked(
  program: string,
  args: string[],
  opts: RunOptions & { logHint?: string },
): Promise<RunResult> {
  const result = await runChild(program, args, opts);
  if (result.code !== 0) {
    const status = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    const output = result.tail ? `; its output ended with:\n${lastLines(result.tail, 8)}` : '';
    const hint = opts.logHint ? `\n(full output in ${opts.logHint})` : '';
    throw new UpdateError(`${opts.what} ${status}${output}${hint}`);
  }
  return result;
}

/** `git ls-remote` for a check; clone, fetch and submodules; local commands; each build step. */
export const DEFAULT_GIT_TIMEOUTS = {
  checkMs: 60_000,
  transferMs: 20 * 60_000,
  localMs: 2 * 60_000,
  buildMs: 60 * 60_000,
};
export type GitTimeouts = typeof DEFAULT_GIT_TIMEOUTS;

export interface RepoContext {
  instanceDir: string;
  sourceDir: string;
  remote: GitRemote;
  branch: string;
  timeouts: GitTimeouts;
  log: Logger;
  sink?: Writable;
  logHint?: string;
}

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

async function git(
  ctx: RepoContext,
  signal: AbortSignal,
  args: string[],
  opts: { cwd?: string; timeoutMs?: number; capture?: boolean; checked?: boolean; what?: string } = {},
): Promise<RunResult> {
  ctx.sink?.write(`$ git ${args.map((a) => (a === ctx.remote.url ? ctx.remote.display : a)).join(' ')}\n`);
  const run = opts.checked === false ? runChild : runChecked;
  return run('git', args, {
    cwd: opts.cwd ?? ctx.sourceDir,
    env: gitEnv(ctx.instanceDir, ctx.remote.env),
    signal,
    timeoutMs: opts.timeoutMs ?? ctx.timeouts.localMs,
    sink: ctx.sink,
    captureStdout: opts.capture,
    what: opts.what ?? `git ${args.slice(0, 2).join(' ')}`,
    logHint: ctx.logHint,
  });
}

export async function remoteHead(ctx: RepoContext, signal: AbortSignal): Promise<string> {
  const ref = `refs/heads/${ctx.branch}`;
  const result = await git(ctx, signal, ['ls-remote', ctx.remote.url, ref], {
    cwd: ctx.instanceDir,
    timeoutMs: ctx.timeouts.checkMs,
    capture: true,
    what: `git ls-remote of ${ctx.remote.display}`,
  });
  for (const line of result.stdout.split('\n')) {
    const [commit, name] = line.trim().split(/\s+/);
    if (name === ref && commit && COMMIT.test(commit)) return commit;
  }
  throw new UpdateError(`the repository ${ctx.remote.display} has no branch "${ctx.branch}" (Updates.Branch)`);
}

export async function localHead(ctx: RepoContext, signal: AbortSignal): Promise<string> {
  const result = await git(ctx, signal, ['rev-parse', 'HEAD'], { capture: true });
  const commit = result.stdout.trim();
  if (!COMMIT.test(commit))
    throw new UpdateError(`git rev-parse HEAD in ${ctx.sourceDir} printed "${commit}", not a commit`);
  return commit;
}

async function isUsableCheckout(ctx: RepoContext, signal: AbortSignal): Promise<boolean> {
  const dotGit = await stat(join(ctx.sourceDir, '.git')).catch(() => null);
  if (!dotGit) return false;
  const status = await git(ctx, signal, ['status', '--porcelain'], { checked: false });
  return status.code === 0;
}

async function updateSubmodules(ctx: RepoContext, signal: AbortSignal): Promise<void> {
  // `git submodule` is a shell script of a dozen processes: not run for nothing.
  if (!(await stat(join(ctx.sourceDir, '.gitmodules')).catch(() => null))) return;
  await git(ctx, signal, ['submodule', 'update', '--init', '--depth=1', '--recursive'], {
    timeoutMs: ctx.timeouts.transferMs,
  });
}

async function updateCheckout(ctx: RepoContext, signal: AbortSignal): Promise<void> {
  // Fetch by URL, not from `origin`: a changed Updates.BaseUrl takes effect without a new clone.
  await git(ctx, signal, ['fetch', '--depth=1', ctx.remote.url, `refs/heads/${ctx.branch}`], {
    timeoutMs: ctx.timeouts.transferMs,
    what: `git fetch of ${ctx.remote.display}`,
  });
  await git(ctx, signal, ['reset', '--hard', 'FETCH_HEAD'], { what: 'git reset --hard FETCH_HEAD' });
  await updateSubmodules(ctx, signal);
}

async function freshClone(ctx: RepoContext, signal: AbortSignal): Promise<void> {
  await rm(ctx.sourceDir, { recursive: true, force: true });
  try {
    await git(ctx, signal, ['clone', '--depth=1', `--branch=${ctx.branch}`, '--', ctx.remote.url, ctx.sourceDir], {
      cwd: ctx.instanceDir,
      timeoutMs: ctx.timeouts.transferMs,
      what: `git clone of ${ctx.remote.display} (branch ${ctx.branch})`,
    });
    await updateSubmodules(ctx, signal);
  } catch (err) {
    await rm(ctx.sourceDir, { recursive: true, force: true });
    throw err;
  }
}

/** Brings `source/` to the branch's newest commit, in place or by a fresh clone, and returns the commit. */
export async function syncCheckout(ctx: RepoContext, signal: AbortSignal): Promise<string> {
  if (await isUsableCheckout(ctx, signal)) {
    try {
      await updateCheckout(ctx, signal);
      return await localHead(ctx, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      ctx.log.warn('updating the checkout failed; cloning it again', { dir: ctx.sourceDir, error: describeError(err) });
    }
  } else if (await stat(ctx.sourceDir).catch(() => null)) {
    ctx.log.warn('source/ is not a usable git checkout; cloning it again', { dir: ctx.sourceDir });
  }
  await freshClone(ctx, signal);
  return localHead(ctx, signal);
}
