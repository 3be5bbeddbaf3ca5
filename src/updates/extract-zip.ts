import { createWriteStream } from 'node:fs';
import { chmod, mkdir, symlink, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { openPromise, type Entry, type ZipFile } from 'yauzl';
import { UpdateError } from '../errors.ts';
import { checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const MADE_BY_UNIX = 3;
const MAX_LINK_TARGET = 4096;

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

/** Passes data through while computing its CRC-32, which yauzl does not check. */
function crcChecker(entry: Entry): Transform {
  let crc = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      crc = crc32(chunk, crc);
      done(null, chunk);
    },
    flush(done) {
      done(crc >>> 0 === entry.crc32 >>> 0 ? null : new UpdateError(`zip entry "${entry.fileName}" fails its CRC check`));
    },
  });
}

async function extractEntry(zip: ZipFile, entry: Entry, destDir: string, links: Set<string>, signal?: AbortSignal): Promise<void> {
  const name = entry.fileName;
  const segments = entrySegments(name);
  for (let i = 1; i < segments.length; i++) {
    if (links.has(segments.slice(0, i).join('/'))) refuseEntry(name, 'its path goes through a link in the archive');
  }
  const mode = unixMode(entry);
  const type = mode === null ? 0 : mode & S_IFMT;
  const isDir = name.endsWith('/') || type === S_IFDIR;
  if (segments.length === 0) return; // "./": the folder itself
  const dest = join(destDir, ...segments);
  if (isDir) {
    await mkdir(dest, { recursive: true });
    return;
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFLNK) refuseEntry(name, 'it is a device or other special file');
  if (entry.isEncrypted()) refuseEntry(name, 'it is encrypted');
  await mkdir(dirname(dest), { recursive: true });
  // A later entry of the same name replaces the earlier one (and a file must not write through a link).
  await unlink(dest).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  links.delete(segments.join('/'));
  const stream = await zip.openReadStreamPromise(entry);
  if (type === S_IFLNK) {
    const target = await readSmall(stream, name);
    checkSymlinkTarget(name, target);
    await symlink(target, dest);
    links.add(segments.join('/'));
    return;
  }
  await pipeline(stream, crcChecker(entry), createWriteStream(dest), signal ? { signal } : {});
  // Server builds rely on the execute bit of their programs; drop setuid/setgid/sticky.
  if (mode !== null && (mode & 0o777) !== 0) await chmod(dest, mode & 0o777);
}

function wrapZipError(err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const bad = YAUZL_NAME_ERROR.exec(message);
  if (bad) {
    return new UpdateError(`refused archive entry "${bad[2]}": ${bad[1]}; the archive is unsafe or damaged, so nothing was installed`, { cause: err });
  }
  return new UpdateError(`the zip archive is corrupt or unreadable (${message})`, { cause: err });
}

/** Extracts a zip entry by entry, streaming each file; refuses unsafe entries (see entry-guard.ts). */
export async function extractZip(archive: string, destDir: string, signal?: AbortSignal): Promise<void> {
  let zip: ZipFile | undefined;
  try {
    zip = await openPromise(archive, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
    const links = new Set<string>();
    for await (const entry of zip.eachEntry()) {
      if (signal?.aborted) throw new UpdateError('extraction was cancelled', { cause: signal.reason });
      await extractEntry(zip, entry, destDir, links, signal);
    }
  } catch (err) {
    if (signal?.aborted && !(err instanceof UpdateError)) throw new UpdateError('extraction was cancelled', { cause: err });
    throw wrapZipError(err);
  } finally {
    zip?.close();
  }
}
