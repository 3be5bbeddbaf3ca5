import { UpdateError } from '../../errors.ts';
import { openRegular } from '../../regular-file.ts';
import { DEFAULT_LIMITS, ensureSpace, refuseOverCeiling, type SpaceLimits, unpackCap } from '../install/disk-guard.ts';
import { extractTar, tarDeclared } from './tar.ts';
import { extractZip } from './zip.ts';

export type ArchiveFormat = 'zip' | 'tar' | 'gzip';

/** How many first bytes `formatOfHead` needs to tell every format apart. */
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
  const { file } = await openRegular(archive);
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return formatOfHead(head.subarray(0, bytesRead));
  } finally {
    await file.close();
  }
}

/**
 * Extracts a zip, tar or tar.gz (chosen by magic bytes) into `destDir`, which must exist. Refuses absolute paths,
 * `..`, links pointing outside, and device entries (UpdateError naming the entry); a corrupt archive is an
 * UpdateError too. On failure `destDir` may hold a partial tree: callers extract into a scratch folder.
 *
 * Before writing anything it reads the size the archive declares (a zip's directory, a tar's headers) and refuses one above
 * `limits.ceilingBytes` or larger than the free space of `destDir` plus `limits.marginBytes` (DiskSpaceError); while
 * writing, it stops at the cap derived from that size (install/disk-guard.ts `unpackCap`), counting bytes written.
 */
export async function extractArchive(
  archive: string,
  destDir: string,
  signal?: AbortSignal,
  limits: SpaceLimits = DEFAULT_LIMITS,
): Promise<void> {
  let format: ArchiveFormat | null;
  try {
    format = await detectArchiveFormat(archive);
  } catch (err) {
    throw new UpdateError(`cannot read the archive ${archive}`, { cause: err });
  }
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
