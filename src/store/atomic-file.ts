import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let tmpCounter = 0;

/** fsync of one file or folder (a folder: the names in it, after a rename). */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `file` with `text` atomically: a new temporary file beside it (with `mode`, never opened through what is
 * there), fsync, rename, fsync the folder. `durable: false` leaves out both fsyncs (atomic, but not through a power
 * loss). Throws the file system's error; the caller says what the file was for.
 */
export async function writeFileAtomic(
  file: string,
  text: string,
  opts: { mode?: number; durable?: boolean } = {},
): Promise<void> {
  const durable = opts.durable ?? true;
  tmpCounter += 1;
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${tmpCounter}.tmp`);
  try {
    const handle = await open(tmp, 'wx', opts.mode ?? 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  // Not every platform can open a folder for fsync (Windows); the rename stands anyway.
  if (durable) await syncPath(dirname(file)).catch(() => undefined);
}
