import { UpdateError } from '../../errors.ts';
import { diskFullError, diskSpaceOf, formatBytes } from '../../store/disk-space.ts';

/**
 * An update that the disk cannot take: too little space for the build before anything is written (`short`), the
 * disk filling up while writing (`full`), or an archive unpacking to more than its cap (`cap`). Unlike a damaged
 * download it is not the build's fault, so it is always told as a failed update (never only as a failed check);
 * `bin/` is never touched.
 */
export class DiskSpaceError extends UpdateError {
  override name = 'DiskSpaceError';
  constructor(
    readonly reason: 'short' | 'full' | 'cap',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What extraction may use: the margin kept free beyond the declared size, and the ceiling of any unpacked size. */
export interface SpaceLimits {
  marginBytes: number;
  ceilingBytes: number;
}

const MB = 1_000_000;
/** The defaults of `Updates.SpaceMarginMegabytes` and `Updates.MaxUnpackedMegabytes`. */
export const DEFAULT_LIMITS: SpaceLimits = { marginBytes: 64 * MB, ceilingBytes: 20_000 * MB };

/** The limits of an instance's `Updates` settings. */
export function limitsOf(updates: { SpaceMarginMegabytes: number; MaxUnpackedMegabytes: number }): SpaceLimits {
  return { marginBytes: updates.SpaceMarginMegabytes * MB, ceilingBytes: updates.MaxUnpackedMegabytes * MB };
}

/**
 * The most an archive may write: its declared size with 10 % and 1 MB of slack (folders and rounding), never above
 * the ceiling; the ceiling alone when nothing was declared (a tar streamed as it downloads).
 */
export function unpackCap(declaredBytes: number | null, limits: SpaceLimits): number {
  if (declaredBytes === null) return limits.ceilingBytes;
  return Math.min(limits.ceilingBytes, Math.ceil(declaredBytes * 1.1) + MB);
}

/** Throws DiskSpaceError(`short`) unless the file system of `dir` has `needsBytes` free. */
export async function ensureSpace(dir: string, needsBytes: number, what: string): Promise<void> {
  const space = await diskSpaceOf(dir).catch(() => null);
  // Unreadable (an odd file system): the write itself will tell.
  if (!space || space.freeBytes >= needsBytes) return;
  throw new DiskSpaceError(
    'short',
    `not enough disk space on ${space.mount}: needs ${formatBytes(needsBytes)}, has ${formatBytes(space.freeBytes)} ` +
      `(${what}, with Updates.SpaceMarginMegabytes to spare); free some space there, the installed build keeps running`,
  );
}

/** Throws DiskSpaceError(`cap`) when an archive declares more than the ceiling, before anything is written. */
export function refuseOverCeiling(declaredBytes: number, limits: SpaceLimits): void {
  if (declaredBytes <= limits.ceilingBytes) return;
  throw new DiskSpaceError(
    'cap',
    `the archive declares ${formatBytes(declaredBytes)} unpacked, more than the ${formatBytes(limits.ceilingBytes)} ` +
      'Updates.MaxUnpackedMegabytes allows; nothing was extracted (raise it if the build really is that large)',
  );
}

/**
 * `err` as the disk-full failure it is when ENOSPC or EDQUOT is in its cause chain (whatever wrapped it: a write
 * inside an extractor reads as a corrupt archive otherwise), else null.
 */
export async function asDiskFull(err: unknown, dir: string, what: string): Promise<DiskSpaceError | null> {
  if (err instanceof DiskSpaceError) return err;
  const full = diskFullError(err);
  if (full === null) return null;
  const space = await diskSpaceOf(dir).catch(() => null);
  const where = space ? ` on ${space.mount}` : '';
  const quota = full.code === 'EDQUOT' ? ', the disk quota is used up' : '';
  // The system's error as the cause, not the wrapper that took it for a damaged archive.
  return new DiskSpaceError(
    'full',
    `disk full${where} while ${what} (${full.message}${quota}); nothing was installed and the partial files were ` +
      'removed; free some space there, the installed build keeps running',
    { cause: full },
  );
}
