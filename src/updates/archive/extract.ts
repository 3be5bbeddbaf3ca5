import { UpdateError } from '../../errors.ts';
import { openRegular } from '../../regular-file.ts';
import { DEFAULT_LIMITS, ensureSpace, refuseOverCeiling, type SpaceLimits, unpackCap } from '../install/disk-guard.ts';
import { commitStaged, type InstallOptions, stageBuild } from '../install/install.ts';
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
 * Extracts a zip, tar or tar.gz (by magic bytes) into the existing `destDir`, refusing unsafe entries (entry-guard.ts)
 * and corrupt archives with an UpdateError; a failure may leave a partial tree (callers use a scratch folder). The
 * declared size is checked against the ceiling and the free space first (DiskSpaceError), and writing stops at the
 * cap derived from it (`unpackCap`).
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

/**
 * Extracts `archive` into a fresh staging folder and swaps it into `<instanceDir>/bin`; `bin/` is untouched on
 * failure. All in the calling thread, as the install tests drive it: the daemon extracts in its update worker
 * (fetch/archive-job.ts), and its main thread never imports this module, so an idle daemon holds no tar or yauzl.
 */
export async function installArchive(opts: InstallOptions): Promise<void> {
  const staging = await stageArchive(opts);
  await commitStaged(opts.instanceDir, staging, opts.signal, opts.onPhase);
}

/** The first half of `installArchive`: `stageBuild` filled by extracting `archive`. */
export function stageArchive(opts: InstallOptions): Promise<string> {
  return stageBuild(opts, async (staging) => {
    opts.onPhase?.('extract');
    await extractArchive(opts.archive, staging, opts.signal, opts.limits);
  });
}
