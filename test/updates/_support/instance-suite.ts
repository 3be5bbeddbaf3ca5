/**
 * The set-up the update suites share: a temp folder holding an instance folder (with an old build in bin/ unless
 * told otherwise) and, for the providers that download, a loopback CDN; plus the rejection assertion they all make.
 * Not a test file.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { extractArchive } from '../../../src/updates/archive/extract.ts';
import type { SpaceLimits } from '../../../src/updates/install/disk-guard.ts';
import { commitStaged, type StageOptions, stageBuild } from '../../../src/updates/install/install.ts';
import { tempSuite } from '../../_support/env.ts';
import { type Cdn, startCdn } from '../../fixtures/archives/serve.ts';

/** `dir`: the test's temp folder; `inst`: the instance folder `<dir>/instances/alpha`. */
export interface InstanceCtx {
  dir: string;
  inst: string;
}

export interface CdnCtx extends InstanceCtx {
  cdn: Cdn;
}

/**
 * What the instance folder holds when a test starts: `old build` is bin/marker reading "old build" (so a swap, a
 * rollback or a refusal can be seen); `empty` only the folder; `none` not even that (`inst` is still its path).
 */
export type InstanceState = 'old build' | 'empty' | 'none';

export interface SuiteOptions<C, T> {
  prefix?: string;
  instance?: InstanceState;
  ctx?: C;
  /** Runs once the folders (and the CDN) are there. */
  before?: (ctx: T) => unknown;
  /** Runs before the CDN closes and the folder goes (stop processes here). */
  after?: (ctx: T) => unknown;
}

/** No context beyond the set-up's own. */
export type Empty = Record<never, never>;

export const OLD_BUILD = 'old build';

async function prepareInstance(ctx: InstanceCtx, state: InstanceState): Promise<void> {
  ctx.inst = join(ctx.dir, 'instances', 'alpha');
  if (state === 'none') return;
  await mkdir(ctx.inst, { recursive: true });
  if (state === 'empty') return;
  await mkdir(join(ctx.inst, 'bin'));
  await writeFile(join(ctx.inst, 'bin', 'marker'), OLD_BUILD);
}

/** A suite whose every test gets a fresh temp folder and instance folder (see InstanceState). */
export function instanceSuite<C extends object = Empty>(
  name: string,
  opts: SuiteOptions<C, C & InstanceCtx> = {},
): Test<C & InstanceCtx> {
  return tempSuite<C & { inst: string }>(name, {
    prefix: opts.prefix,
    ctx: { ...(opts.ctx as C), inst: '' },
    before: async (ctx) => {
      await prepareInstance(ctx, opts.instance ?? 'old build');
      await opts.before?.(ctx);
    },
    after: opts.after,
  });
}

/** An instanceSuite with a loopback CDN started before each test and closed after it. */
export function cdnSuite<C extends object = Empty>(
  name: string,
  opts: SuiteOptions<C, C & CdnCtx> = {},
): Test<C & CdnCtx> {
  const { before, after } = opts;
  return instanceSuite<C & { cdn: Cdn }>(name, {
    ...opts,
    ctx: { ...(opts.ctx as C), cdn: undefined as unknown as Cdn },
    before: async (ctx) => {
      ctx.cdn = await startCdn();
      await before?.(ctx);
    },
    after: async (ctx) => {
      try {
        await after?.(ctx);
      } finally {
        await ctx.cdn?.close();
      }
    },
  });
}

/**
 * Asserts that `work` (a promise, or a call that may throw before it returns one) fails with a `kind` (an
 * UpdateError unless told) whose message matches `pattern`; returns the error for further checks.
 */
export async function rejects(
  work: Promise<unknown> | (() => unknown),
  pattern: RegExp,
  kind: abstract new (...args: never[]) => Error = UpdateError,
): Promise<Error> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (err) {
    assert.instance(err, kind);
    assert.match((err as Error).message, pattern);
    return err as Error;
  }
  throw new Error(`expected a rejection with a ${kind.name} matching ${pattern}`);
}

/** bin/ holds the old build and nothing else. */
export async function oldBuildInBin(inst: string): Promise<void> {
  assert.is(await read(join(inst, 'bin', 'marker')), OLD_BUILD);
  assert.equal(await readdir(join(inst, 'bin')), ['marker']);
}

/** A signal nobody aborts. */
export const never = (): AbortSignal => new AbortController().signal;

export const read = (path: string): Promise<string> => readFile(path, 'utf8');

const yes = () => true;
const no = () => false;

/** Whether `path` leads somewhere (links followed). */
export const exists = (path: string): Promise<boolean> => stat(path).then(yes, no);

/** Whether a directory entry `path` is there, a dangling link included. */
export const entryExists = (path: string): Promise<boolean> => lstat(path).then(yes, no);

/** Whether no process `pid` is left: kill(pid, 0) fails with ESRCH (EPERM would mean it is there, not ours). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The file's SHA-256 in lower-case hex. */
export const sha256Of = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

export interface InstallOptions extends StageOptions {
  archive: string;
  onPhase?: (phase: 'extract' | 'install') => void;
  /** Space to keep and the cap on unpacked bytes (disk-guard.ts); the defaults when left out. */
  limits?: SpaceLimits;
}

/** An archive extracted into a fresh staging folder (on this thread; the daemon does it in its update worker). */
export function stageArchive(opts: InstallOptions): Promise<string> {
  return stageBuild(opts, async (staging) => {
    opts.onPhase?.('extract');
    await extractArchive(opts.archive, staging, opts.signal, opts.limits);
  });
}

/** `stageArchive`, then the staged build swapped into `<instanceDir>/bin`; `bin/` is untouched on failure. */
export async function installArchive(opts: InstallOptions): Promise<void> {
  await commitStaged(opts.instanceDir, await stageArchive(opts), opts.signal, opts.onPhase);
}
