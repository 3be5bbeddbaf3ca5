import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { syncPath } from '../../store/atomic-file.ts';

/**
 * Writes a staged build through to the disk while the old server still runs: otherwise the writeback lands after
 * the swap, as the new server starts and data.json is synced, and a power loss could leave `bin/` pointing at files
 * never written. Resolves once all of it is durable; a cancel stops it. One syncfs (`sync -f`, a single journal
 * commit: 0.1–0.23 s against 0.45–2.1 s of per-file fsyncs for a 200 MB build, bench/tools/stage-once.ts); it also
 * writes whatever else is dirty there, so installs remove their own large files first (artifact.ts). Without
 * `sync -f`, every file and folder is fsynced (`flushFiles`).
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
