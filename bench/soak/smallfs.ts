import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A small real file system (tmpfs) mounted on a folder of the soak, so the disk-full fault fills a disk the daemon
 * really writes to. Mounting needs root (or CAP_SYS_ADMIN); where it is refused the fault kind is skipped, visibly.
 */
export interface SmallFs {
  path: string;
  free(): number;
  /** Writes ballast in 1 MiB pieces until the file system is full (bounded by its size). */
  fill(): void;
  /** Removes the ballast: the space comes back. */
  release(): void;
  unmount(): void;
}

const CHUNK = Buffer.alloc(1024 * 1024);

/** Mounts a tmpfs of `sizeBytes` on `path` (created if missing); throws with the reason when it cannot. */
export function mountSmallFs(path: string, sizeBytes: number): SmallFs {
  mkdirSync(path, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', path], { stdio: 'pipe' });
  const ballast = join(path, '.soak-ballast');
  const free = () => {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  };
  return {
    path,
    free,
    fill() {
      const fd = openSync(ballast, 'a');
      try {
        // Bounded: never more pieces than the file system holds, plus the last partial one.
        for (let i = 0; i <= Math.ceil(sizeBytes / CHUNK.length) + 1; i++) {
          const room = free();
          if (room <= 0) break;
          writeSync(fd, CHUNK, 0, Math.min(CHUNK.length, room));
        }
      } catch {
        // ENOSPC part-way: as full as it gets.
      } finally {
        closeSync(fd);
      }
    },
    release() {
      rmSync(ballast, { force: true });
    },
    unmount() {
      // Lazy: a server still running there keeps its files until it ends; the mount point is gone for the rest.
      execFileSync('umount', ['-l', path], { stdio: 'pipe' });
    },
  };
}

/** Mounts it, or returns why not (logged once by the caller, and the disk-full kind is skipped). */
export function tryMountSmallFs(path: string, sizeBytes: number): SmallFs | string {
  try {
    return mountSmallFs(path, sizeBytes);
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return `cannot mount a tmpfs on ${path} (${message})`;
  }
}
