import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { chmod, lstat, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { defaultRunCommand } from '../../config/load.ts';
import { UpdateError } from '../../errors.ts';
import { makeDir } from '../../make-dir.ts';
import { asDiskFull } from './disk-guard.ts';
import { flushTree } from './flush.ts';

/*
 * A build is extracted into `.update/staging-*` and swapped in by two renames (`bin` → `bin.prev`, staging → `bin`):
 * at any instant a working build sits in `bin`, or, between the renames, in `bin.prev` with `bin` missing, which
 * `recoverInterruptedInstall` puts back.
 */

/** `runCommand` (`RunCommand`, relative to the instance folder or absolute) gets the execute bit. */
export type StageOptions = { instanceDir: string; runCommand?: string; signal: AbortSignal };

/** The instance's scratch folder for downloads and staging; removed at daemon start. */
export function updateDir(instanceDir: string): string {
  return join(instanceDir, '.update');
}

const buildDirs = (instanceDir: string) => ({ bin: join(instanceDir, 'bin'), prev: join(instanceDir, 'bin.prev') });
export const exists = async (path: string): Promise<boolean> => (await lstat(path).catch(() => null)) !== null;
const scratchName = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

/** An UpdateError says itself that `bin/` is as it was; anything else is wrapped to say so. */
function installFailed(instanceDir: string, err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = `installing the build into ${join(instanceDir, 'bin')} failed; bin/ was left as it was`;
  return new UpdateError(message, { cause: err });
}

function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new UpdateError('install was cancelled; bin/ was left as it was', { cause: signal.reason });
}

/**
 * A fresh `.update/staging-*` folder that `fill` put a non-empty build in, its program made executable and the whole
 * made durable, ready for `commitStaged`; on failure it is removed (a full disk told as DiskSpaceError, whatever
 * wrapped it) and `bin/` was never touched.
 */
export async function stageBuild(opts: StageOptions, fill: (staging: string) => Promise<void>): Promise<string> {
  const staging = join(updateDir(opts.instanceDir), scratchName('staging'));
  try {
    throwIfCancelled(opts.signal);
    await makeDir(staging);
    await fill(staging);
    throwIfCancelled(opts.signal);
    if ((await readdir(staging)).length === 0) {
      throw new UpdateError('the archive holds no files; refusing to install an empty build');
    }
    // A RunCommand outside bin/, or naming a program the build does not ship, is left (as the real watchdog does).
    const rel = relative(
      join(opts.instanceDir, 'bin'),
      resolve(opts.instanceDir, opts.runCommand ?? defaultRunCommand()),
    );
    const program = rel === '' || rel.startsWith('..') || isAbsolute(rel) ? null : join(staging, rel);
    const info = program === null ? null : await stat(program).catch(() => null);
    if (program && info?.isFile()) await chmod(program, (info.mode & 0o7777) | 0o111);
    await flushTree(staging, opts.signal);
    throwIfCancelled(opts.signal);
    return staging;
  } catch (err) {
    await discardStaged(staging);
    // After the discard: the free space it reports is what is left with the partial files gone.
    const full = await asDiskFull(err, opts.instanceDir, 'writing the update');
    throw full ?? installFailed(opts.instanceDir, err);
  }
}

/**
 * Swaps a folder made by `stageBuild` into `bin/` (the old build becomes `bin.prev`); the build `bin.prev` held
 * before is removed in the background once the new server is up (`removeDisplacedBuilds`).
 */
export async function commitStaged(
  instanceDir: string,
  staging: string,
  signal: AbortSignal,
  onPhase?: (phase: 'install') => void,
): Promise<void> {
  let displaced: string | null;
  try {
    throwIfCancelled(signal);
    onPhase?.('install');
    displaced = await swapIn(instanceDir, staging);
  } catch (err) {
    throw installFailed(instanceDir, err);
  } finally {
    await discardStaged(staging);
  }
  if (displaced) {
    removeDisplacedBuilds(instanceDir);
    waiting.set(resolve(instanceDir), displaced);
  }
}

/**
 * Per instance folder: the removals under way, chained, and the displaced build kept until the new server's first
 * check-in (removing 200 MB, ~0.45 s, competes with the launch players wait for). One waits at a time; a failed
 * removal is cleared at daemon start.
 */
const removals = new Map<string, Promise<void>>();
const waiting = new Map<string, string>();

/** Starts removing the displaced build that waits, if one does. */
export function removeDisplacedBuilds(instanceDir: string): void {
  const key = resolve(instanceDir);
  const path = waiting.get(key);
  if (path === undefined) return;
  waiting.delete(key);
  const done = (removals.get(key) ?? Promise.resolve())
    .then(() => removeOneByOne(path))
    // What the careful pass could not remove (it changed under it, say) gets one plain attempt.
    .catch(() => rm(path, { recursive: true, force: true, maxRetries: 3 }))
    .catch(() => undefined);
  removals.set(key, done);
  void done.then(() => {
    if (removals.get(key) === done) removals.delete(key);
  });
}

/** One call at a time, links not followed: `rm -r` floods libuv's four threads, holding up data.json and the launch. */
async function removeOneByOne(path: string): Promise<void> {
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) await removeOneByOne(inner);
    else await unlink(inner);
  }
  await rmdir(path);
}

export function oldBuildsRemoved(instanceDir: string): Promise<void> {
  removeDisplacedBuilds(instanceDir);
  return removals.get(resolve(instanceDir)) ?? Promise.resolve();
}

/** Removes a staged build that will not be installed (a no-op once it was swapped in). */
export async function discardStaged(staging: string): Promise<void> {
  // Retries: after a refusal tar may still be finishing writes it had already started (ENOTEMPTY otherwise).
  await rm(staging, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }).catch(() => undefined);
}

/** The `bin/` every instance folder gets before its first build. */
const isEmptyDir = async (dir: string): Promise<boolean> => (await readdir(dir).catch(() => null))?.length === 0;

/** Whether `bin.prev` holds a build to roll back to: an empty one left nothing to launch (found by the soak). */
export function hasPreviousBuild(instanceDir: string): boolean {
  try {
    return readdirSync(join(instanceDir, 'bin.prev')).length > 0;
  } catch {
    return false;
  }
}

/** Renames `staging` to `bin` (bin → bin.prev); returns where the former bin.prev went, for removal, or null. */
async function swapIn(instanceDir: string, staging: string): Promise<string | null> {
  const { bin, prev } = buildDirs(instanceDir);
  const trash = join(updateDir(instanceDir), scratchName('old'));
  // An empty bin/ is no build: as bin.prev it would offer a rollback onto nothing and displace a real one.
  if (await isEmptyDir(bin)) await rmdir(bin);
  const hadBin = await exists(bin);
  const hadPrev = hadBin && (await exists(prev));
  if (hadPrev) await rename(prev, trash);
  if (hadBin) await rename(bin, prev);
  try {
    await rename(staging, bin);
  } catch (err) {
    if (hadBin) await rename(prev, bin).catch(() => undefined);
    throw err;
  }
  return hadPrev ? trash : null;
}

/** At daemon start: puts `bin.prev` back when a crash fell between the two renames, and clears `.update/`. */
export async function recoverInterruptedInstall(instanceDir: string): Promise<void> {
  const { bin, prev } = buildDirs(instanceDir);
  if (!(await exists(bin)) && (await exists(prev))) await rename(prev, bin);
  await rm(updateDir(instanceDir), { recursive: true, force: true });
}

/** Swaps `bin.prev` and `bin`; UpdateError when bin.prev is missing or empty. */
export async function rollbackBin(instanceDir: string): Promise<void> {
  const { bin, prev } = buildDirs(instanceDir);
  if (!(await exists(prev)) || (await isEmptyDir(prev))) {
    throw new UpdateError(
      `cannot roll back ${instanceDir}: there is no previous build (bin.prev); one is kept after each update`,
    );
  }
  if (!(await exists(bin))) {
    await rename(prev, bin);
    return;
  }
  // Order keeps a build in bin, or in bin.prev with bin missing, at every step (see recoverInterruptedInstall).
  try {
    await makeDir(updateDir(instanceDir));
    const parked = join(updateDir(instanceDir), scratchName('rollback'));
    await rename(prev, parked);
    await rename(bin, prev);
    await rename(parked, bin);
  } catch (err) {
    throw new UpdateError(`rolling back ${instanceDir} failed; check bin/ and bin.prev/ by hand`, { cause: err });
  }
}
