import { closeSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { type Entry, fromFdPromise, type ZipFile } from 'yauzl';
import { UpdateError } from '../../errors.ts';
import { AnswerTooLargeError, readCapped } from '../../kit/capped-body.ts';
import { openRegularSync } from '../../regular-file.ts';
import { checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';
import { createExtractTree, type ExtractTree } from './tree.ts';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const MADE_BY_UNIX = 3;
const MAX_LINK_TARGET = 4096;
const STORED = 0;
const DEFLATED = 8;

/** yauzl's own name checks (`validateFileName`). */
const YAUZL_NAME_ERROR = /^(absolute path|invalid relative path|invalid characters in fileName): (.*)$/s;

/** The entry's contents, checked against its recorded size (yauzl's check is off, to word it so) and CRC-32. */
async function* checked(entry: Entry, data: Readable): AsyncGenerator<Buffer> {
  let crc = 0;
  let size = 0;
  try {
    for await (const chunk of data as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      if (size > entry.uncompressedSize) {
        throw new UpdateError(`zip entry "${entry.fileName}" is larger than its recorded size`);
      }
      yield chunk;
    }
  } finally {
    data.destroy();
  }
  if (size !== entry.uncompressedSize) {
    throw new UpdateError(`zip entry "${entry.fileName}" is shorter than its recorded size`);
  }
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new UpdateError(`zip entry "${entry.fileName}" fails its CRC check`);
}

async function extractEntry(zip: ZipFile, entry: Entry, tree: ExtractTree, signal?: AbortSignal): Promise<void> {
  const name = entry.fileName;
  const segments = entrySegments(name);
  const mode = entry.versionMadeBy >> 8 === MADE_BY_UNIX ? entry.externalFileAttributes >>> 16 : null;
  const type = mode === null ? 0 : mode & S_IFMT;
  if (segments.length === 0) return; // "./": the folder itself
  if (name.endsWith('/') || type === S_IFDIR) {
    await tree.folder(name, segments);
    return;
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFLNK) refuseEntry(name, 'it is a device or other special file');
  if (entry.isEncrypted()) refuseEntry(name, 'it is encrypted');
  if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
    throw new UpdateError(
      `zip entry "${name}" uses compression method ${entry.compressionMethod}; only stored and deflated entries are supported`,
    );
  }
  if (type === S_IFLNK) {
    const dest = await tree.place(name, segments);
    const target = await readCapped(await zip.openReadStreamPromise(entry), MAX_LINK_TARGET, name).then(
      (bytes) => bytes.toString('utf8'),
      (err: unknown) =>
        err instanceof AnswerTooLargeError
          ? refuseEntry(name, 'it is a link with an overlong target')
          : Promise.reject(err),
    );
    checkSymlinkTarget(name, target);
    await symlink(target, dest);
    tree.linked(segments);
    return;
  }
  // A mode without permission bits (some zip tools) leaves the file as the umask made it.
  const perms = mode !== null && (mode & 0o777) !== 0 ? mode : null;
  await tree.file(name, segments, checked(entry, await zip.openReadStreamPromise(entry)), perms, signal);
}

function wrapZipError(err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const bad = YAUZL_NAME_ERROR.exec(message);
  if (bad) {
    return new UpdateError(
      `refused archive entry "${bad[2]}": ${bad[1]}; the archive is unsafe or damaged, so nothing was installed`,
      { cause: err },
    );
  }
  return new UpdateError(`the zip archive is corrupt or unreadable (${message})`, { cause: err });
}

/** Extracts a zip, refusing unsafe entries (entry-guard.ts); `admit` takes the declared size and gives the cap. */
export async function extractZip(
  archive: string,
  destDir: string,
  admit: (declaredBytes: number) => Promise<number>,
  signal?: AbortSignal,
): Promise<void> {
  let zip: ZipFile | undefined;
  try {
    // .update/ is the server's to write: never wait on a pipe put there.
    const { fd } = openRegularSync(archive);
    // Once open, the descriptor is yauzl's: `zip.close()` closes it when the last entry stream has ended.
    zip = await fromFdPromise(fd, { autoClose: false, validateEntrySizes: false }).catch((err: unknown) => {
      closeSync(fd);
      throw err;
    });
    const entries: Entry[] = [];
    for await (const entry of zip.eachEntry()) entries.push(entry);
    const tree = await createExtractTree(destDir, await admit(entries.reduce((n, e) => n + e.uncompressedSize, 0)));
    for (const entry of entries) {
      if (signal?.aborted) throw new UpdateError('extraction was cancelled', { cause: signal.reason });
      await extractEntry(zip, entry, tree, signal);
    }
  } catch (err) {
    if (signal?.aborted && !(err instanceof UpdateError))
      throw new UpdateError('extraction was cancelled', { cause: err });
    throw wrapZipError(err);
  } finally {
    zip?.close();
  }
}
