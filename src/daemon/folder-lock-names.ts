import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * The kernel names that stand for one folder: one for its canonical path (symlinks resolved, so two spellings of
 * the same folder meet), and, when the folder exists, one for its device, inode and birth time (so a bind mount of it
 * under another path meets too). Each is a Linux abstract socket name: a leading NUL, no file behind it, gone with the
 * process that bound it.
 */
export async function lockNames(folder: string): Promise<string[]> {
  const names = [abstractName(`path:${await canonicalPath(folder)}`)];
  const id = await inodeOf(folder);
  if (id !== null) names.push(abstractName(`inode:${id}`));
  return names;
}

/** The inode name alone, for a folder that exists now (null while it does not). */
export async function inodeLockName(folder: string): Promise<string | null> {
  const id = await inodeOf(folder);
  return id === null ? null : abstractName(`inode:${id}`);
}

// Abstract names are at most 107 bytes; a hash keeps any path within that.
function abstractName(id: string): string {
  return `\0game-server-watchdog/lock/${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

/**
 * Device, inode and birth time: an inode number is reused at once for a new folder once the old one is removed (ext4
 * does), while a daemon left running in the removed folder still holds its name; the birth time tells the two apart
 * (a bind mount shares it). Where the file system keeps no birth time (0), device and inode alone.
 */
async function inodeOf(folder: string): Promise<string | null> {
  try {
    const s = await stat(folder, { bigint: true });
    if (!s.isDirectory()) return null;
    return s.birthtimeNs === 0n ? `${s.dev}:${s.ino}` : `${s.dev}:${s.ino}:${s.birthtimeNs}`;
  } catch {
    return null;
  }
}

/**
 * `folder` with symlinks resolved, without creating anything: the nearest part that exists is resolved by the
 * kernel and the missing rest is appended as written (a first start, before the folder is made).
 */
export async function canonicalPath(folder: string): Promise<string> {
  const abs = resolve(folder);
  const missing: string[] = [];
  let at = abs;
  for (let i = 0; i < 4096; i++) {
    try {
      return join(await realpath(at), ...missing);
    } catch {
      const up = dirname(at);
      if (up === at) break;
      missing.unshift(basename(at));
      at = up;
    }
  }
  return abs;
}
