import { symlink } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Entry, ZipFile } from 'yauzl';
import { UpdateError } from '../../errors.ts';
import type { ByteBudget } from './budget.ts';
import { writeEntryFile } from './entry-file.ts';
import { checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';
import { createEntryPool } from './entry-pool.ts';
import { createExtractTree, type ExtractTree } from './tree.ts';
import { type OpenArchive, openContents, spanReads } from './zip-data.ts';
import { openZip } from './zip-open.ts';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const MADE_BY_UNIX = 3;
const MAX_LINK_TARGET = 4096;
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

async function extractEntry(
  zip: ZipFile,
  archive: OpenArchive,
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
  const pool = createEntryPool(PARALLEL_WRITES);
  try {
    // One descriptor for the directory and every entry's data (an open and a close per entry otherwise).
    const { zip: opened, fd: data } = await openZip(archive, { autoClose: false, validateEntrySizes: true });
    zip = opened;
    const source = { fd: data, size: opened.fileSize, read: spanReads(data, opened.fileSize) };
    const tree = await createExtractTree(destDir);
    for await (const entry of opened.eachEntry()) {
      if (signal?.aborted) throw new UpdateError('extraction was cancelled', { cause: signal.reason });
      const file = isFile(entry) ? entrySegments(entry.fileName).join('/') : null;
      await pool.run(file, () => extractEntry(opened, source, entry, tree, signal, budget));
    }
    await pool.finish();
  } catch (err) {
    if (signal?.aborted && !(err instanceof UpdateError))
      throw new UpdateError('extraction was cancelled', { cause: err });
    throw wrapZipError(err);
  } finally {
    await pool.idle();
    zip?.close();
  }
}
