import { execFile } from 'node:child_process';
import { close, fsync, open } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes a staged build's files and folders through to the disk while the old server still runs. Without it the
 * kernel writes the freshly extracted build back after the swap, in the very moments the new server starts and
 * data.json is synced (an fsync there waits for that writeback), and a power loss after the swap could leave `bin/`
 * pointing at files never written. Resolves only once all of it is durable; a cancel stops it.
 *
 * One syncfs of the file system holding `dir` (coreutils `sync -f`) when it can: a single journal commit for the
 * whole tree. The file-by-file fsyncs it replaces took 0.45 to 2.1 s for a 200 MB build of 1,600 files on the
 * loaded bench machine, the syncfs 0.1 to 0.23 s in the same runs (bench/tools/stage-once.ts). It also writes what
 * else on that file system is waiting to be written, which is why an install should not leave large files of its
 * own dirty (artifact.ts removes a zip's download before this). Where `sync -f` is missing or fails, every file
 * and folder is fsynced instead (`flushFiles`).
 */
export async function flushTree(dir: string, signal: AbortSignal): Promise<void> {
  if (await syncFileSystem(dir, signal)) return;
  if (signal.aborted) return; // the caller reports the cancellation
  await flushFiles(dir, signal);
}

/** syncfs(2) of the file system holding `dir`, through `sync -f`; false when that could not be done. */
function syncFileSystem(dir: string, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('sync', ['-f', dir], { signal, timeout: SYNC_TIMEOUT_MS }, (err) => resolve(err === null));
  });
}

/** Longer than any syncfs of a build should take; past it the file-by-file flush runs instead. */
const SYNC_TIMEOUT_MS = 120_000;

/**
 * Every file and folder under `dir` fsynced, one at a time (slower than one syncfs: each waits for its own journal
 * commit, 1.4 to 4 s for that build). Links are not followed; a cancel stops it between files.
 */
export async function flushFiles(dir: string, signal: AbortSignal): Promise<void> {
  for (const path of await treePaths(dir, signal)) {
    if (signal.aborted) return; // the caller reports the cancellation
    await syncPath(path);
  }
}

/** The files and folders under `dir` (each folder after what it holds), and `dir` itself last. */
async function treePaths(dir: string, signal: AbortSignal, into: string[] = []): Promise<string[]> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (signal.aborted) return into; // the caller reports the cancellation
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await treePaths(path, signal, into);
    else if (entry.isFile()) into.push(path);
  }
  into.push(dir);
  return into;
}

/** fsync of one file or folder (a folder: the names in it, after a rename). */
export function syncPath(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (openErr, fd) => {
      if (openErr) return reject(openErr);
      fsync(fd, (syncErr) => close(fd, (closeErr) => (syncErr || closeErr ? reject(syncErr ?? closeErr) : resolve())));
    });
  });
}
