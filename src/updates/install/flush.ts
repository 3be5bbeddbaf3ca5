import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { syncPath } from '../../store/atomic-file.ts';

/**
 * Makes a staged build durable while the old server still runs, so a power loss after the swap cannot leave `bin/`
 * pointing at files never written. One syncfs (`sync -f`, several times faster than per-file fsyncs: bench/README.md),
 * which also writes whatever else is dirty (installs remove their large files first); failing that, or past 2 minutes,
 * `flushFiles`. A cancel stops it; the caller reports it.
 */
export async function flushTree(dir: string, signal: AbortSignal): Promise<void> {
  const synced = await new Promise<boolean>((resolve) => {
    execFile('sync', ['-f', dir], { signal, timeout: 120_000 }, (err) => resolve(err === null));
  });
  if (!synced && !signal.aborted) await flushFiles(dir, signal);
}

/** Every file and folder under `dir` fsynced in turn, links not followed. */
export async function flushFiles(dir: string, signal: AbortSignal): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const e of entries.filter((e) => e.isFile() || e.isDirectory())) {
    if (signal.aborted) return;
    await syncPath(join(e.parentPath, e.name));
  }
  if (!signal.aborted) await syncPath(dir);
}
