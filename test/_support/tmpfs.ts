import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small real file system (tmpfs) mounted in a temp folder, for full-disk tests. */
export interface SmallFs {
  /** Where it is mounted. */
  path: string;
  /** Bytes still free on it now. */
  free(): number;
  /** Writes a ballast file until at most `leaveBytes` are free (0: the disk is full). */
  fill(leaveBytes?: number): void;
  /** Removes the ballast: the space comes back. */
  release(): void;
  /** Unmounts and removes the folder (whatever is still running there loses its files). */
  unmount(): void;
}

let probed: string | null | undefined;

/** Why a tmpfs cannot be mounted here (not root, no mount permission), or null when it can; probed once a run. */
export function tmpfsUnavailable(): string | null {
  if (probed !== undefined) return probed;
  try {
    mountSmallFs(64 * 1024).unmount();
    probed = null;
  } catch (err) {
    probed = `cannot mount a tmpfs here (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
  return probed;
}

/** Mounts a tmpfs of `sizeBytes` (rounded up to pages by the kernel). Throws when mounting is not allowed. */
export function mountSmallFs(sizeBytes: number): SmallFs {
  const path = mkdtempSync(join(tmpdir(), 'wd-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0777`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (err) {
    rmSync(path, { recursive: true, force: true });
    throw err;
  }
  const ballast = join(path, '.ballast');
  const free = () => {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  };
  return {
    path,
    free,
    fill(leaveBytes = 0) {
      const want = free() - leaveBytes;
      if (want <= 0) return;
      try {
        writeFileSync(ballast, Buffer.alloc(want), { flag: 'a' });
      } catch {
        // ENOSPC part-way: the disk is as full as it gets.
      }
    },
    release() {
      rmSync(ballast, { force: true });
    },
    unmount() {
      try {
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      } finally {
        rmSync(path, { recursive: true, force: true });
      }
    },
  };
}
