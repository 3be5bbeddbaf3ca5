import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes a staged build's files and folders through to the disk (fsync), one call at a time, while the old server
 * still runs. Without it the kernel writes the freshly extracted build back after the swap, in the very moments the
 * new server starts and data.json is synced (an fsync there waits for that writeback), and a power loss after the
 * swap could leave `bin/` pointing at files never written. Links are not followed; a cancel stops it between files.
 */
export async function flushTree(dir: string, signal: AbortSignal): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (signal.aborted) return; // the caller reports the cancellation
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await flushTree(path, signal);
    else if (entry.isFile()) await syncPath(path);
  }
  await syncPath(dir);
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
