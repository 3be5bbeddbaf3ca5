import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { asDiskFull, type SpaceLimits } from './disk-guard.ts';
import { flushTree } from './flush.ts';

/**
 * Installing a build into an instance folder without ever leaving it without one. The build is
 * extracted into `.update/staging-*` and swapped in by two renames (`bin` → `bin.prev`, staging → `bin`). At any
 * instant a working build sits in `bin`, or, between the two renames, in `bin.prev` with `bin` missing, which
 * `recoverInterruptedInstall` puts back.
 */

export const DEFAULT_RUN_COMMAND = 'bin/Robust.Server';

export interface InstallOptions {
  archive: string;
  instanceDir: string;
  /** `RunCommand`, relative to the instance folder (or absolute); its target gets the execute bit when inside bin/. */
  runCommand?: string;
  signal: AbortSignal;
  onPhase?: (phase: 'extract' | 'install') => void;
  /** Space to keep and the cap on unpacked bytes (disk-guard.ts); the defaults when left out. */
  limits?: SpaceLimits;
}

/** The instance's scratch folder for downloads and staging; removed at daemon start. */
export function updateDir(instanceDir: string): string {
  return join(instanceDir, '.update');
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function scratchName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** A failed install as an UpdateError that says `bin/` is as it was (one already an UpdateError says so itself). */
function installFailed(instanceDir: string, err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = `installing the build into ${join(instanceDir, 'bin')} failed; bin/ was left as it was`;
  return new UpdateError(message, { cause: err });
}

function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new UpdateError('install was cancelled; bin/ was left as it was', { cause: signal.reason });
}

/** Where `runCommand` lands inside the extracted tree, or null when it does not point into bin/. */
function programInBuild(instanceDir: string, runCommand: string, buildDir: string): string | null {
  const rel = relative(join(instanceDir, 'bin'), resolve(instanceDir, runCommand));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  return join(buildDir, rel);
}

async function makeExecutable(path: string): Promise<void> {
  const info = await stat(path).catch(() => null);
  // Absent is fine: a RunCommand may name a program the build does not ship (the real watchdog also skips it then).
  if (info?.isFile()) await chmod(path, (info.mode & 0o7777) | 0o111);
}

export type StageOptions = Pick<InstallOptions, 'instanceDir' | 'runCommand' | 'signal'>;

/**
 * Makes a fresh `.update/staging-*` folder, lets `fill` put the build in it, checks it holds something and gives
 * the program the execute bit. Returns the folder, ready for `commitStaged`; on failure it is removed and `bin/` was
 * never touched. A failure caused by a full disk is reported as that (DiskSpaceError), whatever wrapped it.
 */
export async function stageBuild(opts: StageOptions, fill: (staging: string) => Promise<void>): Promise<string> {
  const staging = join(updateDir(opts.instanceDir), scratchName('staging'));
  try {
    throwIfCancelled(opts.signal);
    await mkdir(staging, { recursive: true });
    await fill(staging);
    throwIfCancelled(opts.signal);
    if ((await readdir(staging)).length === 0) {
      throw new UpdateError('the archive holds no files; refusing to install an empty build');
    }
    const program = programInBuild(opts.instanceDir, opts.runCommand ?? DEFAULT_RUN_COMMAND, staging);
    if (program) await makeExecutable(program);
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
 * The second half: swaps a folder made by `stageBuild` into `bin/` (the old build becomes `bin.prev`). Resolves
 * once the new build is in `bin/`; the build that `bin.prev` held before is removed once the new server is up
 * (`removeDisplacedBuilds`), in the background.
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
  if (displaced) removeLater(instanceDir, displaced);
}

/** Removals of displaced builds still under way, per instance folder, each chained after the one before. */
const removals = new Map<string, Promise<void>>();
/** A displaced build per instance folder that waits for the new server to be up before it is removed. */
const waiting = new Map<string, string>();

/**
 * Keeps a displaced build until `removeDisplacedBuilds` (the new server's first check-in): removing 200 MB (~0.45 s,
 * bench/downtime.ts) competes with the launch players wait for. One waits at a time (an older one is removed now);
 * a failed removal leaves it in `.update/`, cleared at daemon start.
 */
function removeLater(instanceDir: string, path: string): void {
  const key = resolve(instanceDir);
  const older = waiting.get(key);
  waiting.set(key, path);
  if (older) startRemoval(key, older);
}

/** Starts removing the build displaced by the last install into `instanceDir`, if one waits; returns at once. */
export function removeDisplacedBuilds(instanceDir: string): void {
  const key = resolve(instanceDir);
  const path = waiting.get(key);
  if (path === undefined) return;
  waiting.delete(key);
  startRemoval(key, path);
}

function startRemoval(key: string, path: string): void {
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

/**
 * Removes a folder tree one file-system call at a time (never following links). `rm` with `recursive` starts a
 * call for every entry at once, which queues hundreds of requests in libuv's pool of four threads ahead of whatever
 * the daemon does next: run in the background after an install, it held up data.json and the launch of the new
 * server by as long as it ran itself (bench/downtime.ts). One call at a time leaves the other threads free.
 */
async function removeOneByOne(path: string): Promise<void> {
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const inner = join(path, entry.name);
    if (entry.isDirectory()) await removeOneByOne(inner);
    else await unlink(inner);
  }
  await rmdir(path);
}

/** Removes every build displaced by installs into `instanceDir` so far, without waiting for a check-in; resolves once done. */
export function oldBuildsRemoved(instanceDir: string): Promise<void> {
  removeDisplacedBuilds(instanceDir);
  return removals.get(resolve(instanceDir)) ?? Promise.resolve();
}

/** Removes a staged build that will not be installed (a no-op once it was swapped in). */
export async function discardStaged(staging: string): Promise<void> {
  // Retries: after a refusal tar may still be finishing writes it had already started (ENOTEMPTY otherwise).
  await rm(staging, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }).catch(() => undefined);
}

/** True when `dir` is a folder with nothing in it (the `bin/` every instance folder gets before its first build). */
async function isEmptyDir(dir: string): Promise<boolean> {
  return readdir(dir).then(
    (entries) => entries.length === 0,
    () => false,
  );
}

/**
 * Whether `bin.prev` holds a previous build to roll back to: a folder with something in it. An empty one is no
 * build (rolling back onto it left the instance with nothing to launch; found by the soak).
 */
export function hasPreviousBuild(instanceDir: string): boolean {
  try {
    return readdirSync(join(instanceDir, 'bin.prev')).length > 0;
  } catch {
    return false;
  }
}

/** Renames `staging` to `bin` (bin → bin.prev); returns where the former bin.prev went, for removal, or null. */
async function swapIn(instanceDir: string, staging: string): Promise<string | null> {
  const bin = join(instanceDir, 'bin');
  const prev = join(instanceDir, 'bin.prev');
  const trash = join(updateDir(instanceDir), scratchName('old'));
  // An empty bin/ (before the first build) is not a build to keep: as bin.prev it would offer a rollback onto
  // nothing, and it would displace a real previous build.
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

/**
 * At daemon start: puts `bin.prev` back when a crash fell between the two renames (`bin` missing), and removes the
 * scratch folder with any half-done download or staging tree.
 */
export async function recoverInterruptedInstall(instanceDir: string): Promise<void> {
  const bin = join(instanceDir, 'bin');
  const prev = join(instanceDir, 'bin.prev');
  if (!(await exists(bin)) && (await exists(prev))) await rename(prev, bin);
  await rm(updateDir(instanceDir), { recursive: true, force: true });
}

/** Swaps `bin.prev` back into `bin`; the current build becomes `bin.prev`. UpdateError when bin.prev is missing or empty. */
export async function rollbackBin(instanceDir: string): Promise<void> {
  const bin = join(instanceDir, 'bin');
  const prev = join(instanceDir, 'bin.prev');
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
    await mkdir(updateDir(instanceDir), { recursive: true });
    const parked = join(updateDir(instanceDir), scratchName('rollback'));
    await rename(prev, parked);
    await rename(bin, prev);
    await rename(parked, bin);
  } catch (err) {
    throw new UpdateError(`rolling back ${instanceDir} failed; check bin/ and bin.prev/ by hand`, { cause: err });
  }
}
