import { UpdateError } from '../../errors.ts';
import { readRegularHead } from '../../regular-file.ts';
import { DEFAULT_LIMITS, ensureSpace, refuseOverCeiling, type SpaceLimits, unpackCap } from '../install/disk-guard.ts';
import { extractTar, tarDeclared } from './tar.ts';
import { extractZip } from './zip.ts';

export type ArchiveFormat = 'zip' | 'tar' | 'gzip';

export const HEAD_BYTES = 512;

/** The format from an archive's first bytes: names lie (a `.zip` link may serve a tarball), magic bytes do not. */
export function formatOfHead(head: Buffer): ArchiveFormat | null {
  if (
    head.length >= 4 &&
    head[0] === 0x50 &&
    head[1] === 0x4b &&
    (head[2] === 3 || head[2] === 5) &&
    head[3] === head[2] + 1
  ) {
    return 'zip'; // PK\3\4 (a local file header) or PK\5\6 (an empty archive)
  }
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.length >= 262 && head.toString('latin1', 257, 262) === 'ustar') return 'tar';
  return null;
}

export async function detectArchiveFormat(archive: string): Promise<ArchiveFormat | null> {
  return formatOfHead(await readRegularHead(archive, HEAD_BYTES));
}

/**
 * Extracts a zip, tar or tar.gz into the existing `destDir` (a scratch folder: a failure may leave a partial tree);
 * the declared size is checked against the ceiling and the free space first, and writing stops at `unpackCap`.
 */
export async function extractArchive(
  archive: string,
  destDir: string,
  signal?: AbortSignal,
  limits: SpaceLimits = DEFAULT_LIMITS,
): Promise<void> {
  const format = await detectArchiveFormat(archive).catch((err: unknown) => {
    throw new UpdateError(`cannot read the archive ${archive}`, { cause: err });
  });
  if (format === null) {
    throw new UpdateError(
      `${archive} is not a zip, tar or tar.gz archive (unrecognised first bytes); the download is damaged or is not a build`,
    );
  }
  const admit = async (declared: number): Promise<number> => {
    refuseOverCeiling(declared, limits);
    await ensureSpace(destDir, declared + limits.marginBytes, 'the unpacked build');
    return unpackCap(declared, limits);
  };
  if (format === 'zip') return extractZip(archive, destDir, admit, signal);
  const cap = await admit(await tarDeclared(archive, format === 'gzip', signal));
  await extractTar(archive, destDir, signal, format === 'gzip', cap);
}
