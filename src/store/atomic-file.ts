import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let tmpCounter = 0;

/**
 * Replaces `file` with `text` atomically: a temporary file in the same folder (created with `mode`), fsync, rename
 * over the old one, fsync the folder. A reader sees the old file or the new one, never half of either; the
 * temporary file is removed on failure. `durable: false` leaves out both fsyncs (still atomic, but not through a
 * power loss). Throws the file system's error; the caller says what the file was for.
 */
export async function writeFileAtomic(
  file: string,
  text: string,
  opts: { mode?: number; durable?: boolean } = {},
): Promise<void> {
  const durable = opts.durable ?? true;
  const dir = dirname(file);
  tmpCounter += 1;
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${tmpCounter}.tmp`);
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
  if (durable) await syncDir(dir);
}

/** Makes the rename durable. Not every platform can open a folder for fsync (Windows); the rename stands anyway. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort only.
  }
}
