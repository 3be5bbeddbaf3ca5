import { UpdateError } from '../../errors.ts';
import { diskFullError, diskSpaceOf, formatBytes } from '../../store/disk-space.ts';

/**
 * An update the disk cannot take: too little space up front (`short`), the disk filling (`full`), or more unpacked
 * than the cap (`cap`). Not the build's fault, so always told as a failed update, never only a failed check.
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

const MB = 1_000_000;
/** The margin kept free beyond the declared size, and the ceiling of any unpacked size. */
export const DEFAULT_LIMITS = { marginBytes: 64 * MB, ceilingBytes: 20_000 * MB };
export type SpaceLimits = typeof DEFAULT_LIMITS;

export function limitsOf(updates: { SpaceMarginMegabytes: number; MaxUnpackedMegabytes: number }): SpaceLimits {
  return { marginBytes: updates.SpaceMarginMegabytes * MB, ceilingBytes: updates.MaxUnpackedMegabytes * MB };
}

/** The most an archive may write: its declared size plus 10 % and 1 MB, within the ceiling (alone when null). */
export function unpackCap(declaredBytes: number | null, limits: SpaceLimits): number {
  if (declaredBytes === null) return limits.ceilingBytes;
  return Math.min(limits.ceilingBytes, Math.ceil(declaredBytes * 1.1) + MB);
}

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

export function refuseOverCeiling(declaredBytes: number, limits: SpaceLimits): void {
  if (declaredBytes <= limits.ceilingBytes) return;
  throw new DiskSpaceError(
    'cap',
    `the archive declares ${formatBytes(declaredBytes)} unpacked, more than the ${formatBytes(limits.ceilingBytes)} ` +
      'Updates.MaxUnpackedMegabytes allows; nothing was extracted (raise it if the build really is that large)',
  );
}

/** `err` as DiskSpaceError(`full`) when ENOSPC or EDQUOT is in its cause chain (an extractor says "corrupt"), else null. */
export async function asDiskFull(err: unknown, dir: string, what: string): Promise<DiskSpaceError | null> {
  if (err instanceof DiskSpaceError) return err;
  const full = diskFullError(err);
  if (full === null) return null;
  const space = await diskSpaceOf(dir).catch(() => null);
  const where = space ? ` on ${space.mount}` : '';
  const quota = full.code === 'EDQUOT' ? ', the disk quota is used up' : '';
  return new DiskSpaceError(
    'full',
    `disk full${where} while ${what} (${full.message}${quota}); nothing was installed and the partial files were ` +
      'removed; free some space there, the installed build keeps running',
    { cause: full },
  );
}
