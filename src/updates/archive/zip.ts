import { open, symlink, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { crc32, createInflateRaw } from 'node:zlib';
import { openPromise, type Entry, type ZipFile } from 'yauzl';
import { UpdateError } from '../../errors.ts';
import { checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';
import { type EntryContents, writeEntryFile } from './entry-file.ts';
import type { ByteBudget } from './budget.ts';
import { createEntryPool } from './entry-pool.ts';
import { createExtractTree, type ExtractTree } from './tree.ts';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const MADE_BY_UNIX = 3;
const MAX_LINK_TARGET = 4096;
const STORED = 0;
const DEFLATED = 8;
/** Read and inflate in large chunks: yauzl's entry streams move 16 KB at a time, a thread-pool trip each. */
const READ_CHUNK = 1 << 20;
const INFLATE_CHUNK = 1 << 18;
/** Files written side by side (entry-pool.ts); the thread pool has four threads. */
const PARALLEL_WRITES = 6;

/** yauzl validates names itself; its messages start like this (yauzl `validateFileName`). */
const YAUZL_NAME_ERROR = /^(absolute path|invalid relative path|invalid characters in fileName): (.*)$/s;

function unixMode(entry: Entry): number | null {
  return entry.versionMadeBy >> 8 === MADE_BY_UNIX ? entry.externalFileAttributes >>> 16 : null;
}

async function readSmall(stream: Readable, name: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_LINK_TARGET) refuseEntry(name, 'it is a link with an overlong target');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The entry's data, checked against the central directory's size and CRC-32 as it passes; `stop` runs at the end. */
async function* checkedContents(entry: Entry, data: AsyncIterable<Buffer>, stop: () => void): AsyncGenerator<Buffer> {
  let crc = 0;
  let size = 0;
  try {
    for await (const chunk of data) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      if (size > entry.uncompressedSize)
        throw new UpdateError(`zip entry "${entry.fileName}" is larger than its recorded size`);
      yield chunk;
    }
  } finally {
    stop();
  }
  if (size !== entry.uncompressedSize)
    throw new UpdateError(`zip entry "${entry.fileName}" is shorter than its recorded size`);
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new UpdateError(`zip entry "${entry.fileName}" fails its CRC check`);
}

/**
 * `length` bytes from `start`, read through the shared handle. Not an fs ReadStream on its fd: destroying one (an
 * error, a cancel) closes the fd under the entries still being read beside it, whatever `autoClose` says.
 */
async function* readRange(archive: FileHandle, start: number, length: number): AsyncGenerator<Buffer> {
  for (let pos = start, end = start + length; pos < end; ) {
    const size = Math.min(READ_CHUNK, end - pos);
    const { bytesRead, buffer } = await archive.read(Buffer.allocUnsafe(size), 0, size, pos);
    if (bytesRead === 0) throw new UpdateError(`the zip archive ended inside the data at offset ${pos}`);
    pos += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/**
 * The entry's contents, decompressed and checked. yauzl checks the local header and that the data lies inside the
 * file; the data itself is read here in large chunks (see READ_CHUNK).
 */
async function openContents(zip: ZipFile, archive: FileHandle, entry: Entry): Promise<EntryContents> {
  if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
    throw new UpdateError(
      `zip entry "${entry.fileName}" uses compression method ${entry.compressionMethod}; only stored and deflated entries are supported`,
    );
  }
  const { fileDataStart } = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
  const raw = Readable.from(readRange(archive, fileDataStart, entry.compressedSize), { objectMode: false });
  // Each inflate stream allocates its chunk: small entries (most of a build) get a small one.
  const chunkSize = Math.min(INFLATE_CHUNK, Math.max(16 * 1024, entry.uncompressedSize));
  const data = entry.compressionMethod === DEFLATED ? raw.pipe(createInflateRaw({ chunkSize })) : raw;
  // pipe() passes no errors on: a failed read must end the inflate, or the entry would wait for it forever.
  if (data !== raw) raw.once('error', (err) => data.destroy(err));
  // Both ends, so no read through the shared handle outlives the entry.
  const stop = () => {
    raw.destroy();
    data.destroy();
  };
  return { chunks: checkedContents(entry, data, stop), stop };
}

async function extractEntry(
  zip: ZipFile,
  archive: FileHandle,
  entry: Entry,
  tree: ExtractTree,
  signal?: AbortSignal,
  budget?: ByteBudget,
): Promise<void> {
  const name = entry.fileName;
  const segments = entrySegments(name);
  const mode = unixMode(entry);
  const type = mode === null ? 0 : mode & S_IFMT;
  if (segments.length === 0) return; // "./": the folder itself
  if (name.endsWith('/') || type === S_IFDIR) {
    await tree.folder(name, segments);
    return;
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFLNK) refuseEntry(name, 'it is a device or other special file');
  if (entry.isEncrypted()) refuseEntry(name, 'it is encrypted');
  const dest = await tree.place(name, segments);
  if (type === S_IFLNK) {
    const target = await readSmall(await zip.openReadStreamPromise(entry), name);
    checkSymlinkTarget(name, target);
    await symlink(target, dest);
    tree.linked(segments);
    return;
  }
  // A mode without permission bits (some zip tools) leaves the file as the umask made it.
  await writeEntryFile(
    await openContents(zip, archive, entry),
    dest,
    mode !== null && (mode & 0o777) !== 0 ? mode : null,
    signal,
    budget,
  );
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

/** A regular file, which may be written beside others (entry-pool.ts); folders and links are written alone. */
function isFile(entry: Entry): boolean {
  const mode = unixMode(entry);
  const type = mode === null ? 0 : mode & S_IFMT;
  return !entry.fileName.endsWith('/') && (type === 0 || type === S_IFREG);
}

/**
 * Extracts a zip entry by entry, streaming each file; refuses unsafe entries (see entry-guard.ts). Every byte written
 * is charged to `budget`.
 */
export async function extractZip(
  archive: string,
  destDir: string,
  signal?: AbortSignal,
  budget?: ByteBudget,
): Promise<void> {
  let zip: ZipFile | undefined;
  let data: FileHandle | undefined;
  const pool = createEntryPool(PARALLEL_WRITES);
  try {
    const opened = await openPromise(archive, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
    zip = opened;
    // One handle for every entry's data (an open and a close per entry otherwise).
    const handle = await open(archive, 'r');
    data = handle;
    const tree = await createExtractTree(destDir);
    for await (const entry of opened.eachEntry()) {
      if (signal?.aborted) throw new UpdateError('extraction was cancelled', { cause: signal.reason });
      const file = isFile(entry) ? entrySegments(entry.fileName).join('/') : null;
      await pool.run(file, () => extractEntry(opened, handle, entry, tree, signal, budget));
    }
    await pool.finish();
  } catch (err) {
    if (signal?.aborted && !(err instanceof UpdateError))
      throw new UpdateError('extraction was cancelled', { cause: err });
    throw wrapZipError(err);
  } finally {
    await pool.idle();
    zip?.close();
    await data?.close();
  }
}
