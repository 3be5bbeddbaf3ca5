import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { syncPath } from '../../store/atomic-file.ts';

/**
 * Makes a staged build durable while the old server still runs, so a power loss after the swap cannot leave `bin/`
 * pointing at files never written. One syncfs (`sync -f`: 0.1–0.23 s against 0.45–2.1 s of per-file fsyncs for
 * 200 MB, bench/tools/stage-once.ts), which also writes whatever else is dirty (installs remove their large files
 * first); failing that, `flushFiles`. A cancel stops it.
 */
export async function flushTree(dir: string, signal: AbortSignal): Promise<void> {
  if (await syncFileSystem(dir, signal)) return;
  if (signal.aborted) return; // the caller reports the cancellation
  await flushFiles(dir, signal);
}

function syncFileSystem(dir: string, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('sync', ['-f', dir], { signal, timeout: SYNC_TIMEOUT_MS }, (err) => resolve(err === null));
  });
}

/** Longer than any syncfs of a build should take; past it the file-by-file flush runs instead. */
const SYNC_TIMEOUT_MS = 120_000;

/** Every file and folder under `dir` fsynced in turn (1.4 to 4 s for that build), links not followed. */
export async function flushFiles(dir: string, signal: AbortSignal): Promise<void> {
  for (const path of await treePaths(dir, signal)) {
    if (signal.aborted) return; // the caller reports the cancellation
    await syncPath(path);
  }
}

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
