import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite, type Test } from 'uvu';

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

export interface SmallDiskCtx {
  /** The test's small disk (null only where no tmpfs can be mounted, and then no test runs). */
  fs: SmallFs | null;
  /** A temp folder off the small disk. */
  work: string;
}

/**
 * A suite whose every test gets a fresh small disk of `bytes` and a temp folder off it, both gone after the test;
 * `prepare` then lays out what the tests expect on the disk. Where no tmpfs can be mounted, one line says so and
 * `test` registers every test as skipped.
 */
export function smallDiskSuite<C extends object = Record<never, never>>(
  name: string,
  bytes: number,
  prepare: (ctx: C & SmallDiskCtx & { fs: SmallFs }) => Promise<void>,
) {
  const unavailable = tmpfsUnavailable();
  if (unavailable) console.log(`skipping "${name}": ${unavailable}`);
  const s = suite<C & SmallDiskCtx>(name, { fs: null, work: '' } as C & SmallDiskCtx);
  s.before.each(async (ctx) => {
    if (unavailable) return;
    ctx.work = await mkdtemp(join(tmpdir(), 'wd-work-'));
    const fs = mountSmallFs(bytes);
    ctx.fs = fs;
    await prepare(Object.assign(ctx, { fs }));
  });
  s.after.each(async (ctx) => {
    try {
      ctx.fs?.unmount();
    } finally {
      ctx.fs = null;
      if (ctx.work) await rm(ctx.work, { recursive: true, force: true });
    }
  });
  return { s, test: unavailable ? s.skip : s };
}

/**
 * Registers `title` on `test` to run `body` on a fresh small disk of `bytes`, unmounted after it; where no tmpfs
 * can be mounted, the test is registered as skipped and one line says why.
 */
export function onSmallDisk<C>(
  test: Test<C>,
  title: string,
  bytes: number,
  body: (fs: SmallFs) => Promise<void>,
): void {
  const unavailable = tmpfsUnavailable();
  if (unavailable) {
    console.log(`skipped "${title}": ${unavailable}`);
    test.skip(title, () => undefined);
    return;
  }
  test(title, async () => {
    const fs = mountSmallFs(bytes);
    try {
      await body(fs);
    } finally {
      fs.unmount();
    }
  });
}
