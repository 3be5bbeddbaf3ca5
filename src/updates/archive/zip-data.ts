import { read } from 'node:fs';
import { Readable } from 'node:stream';
import { crc32, createInflateRaw, inflateRawSync } from 'node:zlib';
import type { Entry, ZipFile } from 'yauzl';
import { UpdateError } from '../../errors.ts';
import type { EntryContents } from './entry-file.ts';

const STORED = 0;
const DEFLATED = 8;
/** Read and inflate large entries in large chunks: yauzl's entry streams move 16 KB at a time, a thread-pool trip each. */
const READ_CHUNK = 1 << 20;
const INFLATE_CHUNK = 1 << 18;
const LOCAL_HEADER_BYTES = 30;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
/** What a local header's extra field may add over the central directory's (Info-ZIP's differ by a few bytes). */
const EXTRA_SLACK = 256;
/**
 * Entries at most this large, packed and unpacked, are read with their local header in one call and inflated at
 * once on this thread (well under a millisecond each): most of a build is such files, and an inflate stream
 * per entry (its own object, a thread-pool trip per chunk and at the end) cost more than the inflating itself.
 */
const SMALL_ENTRY = 256 * 1024;

/** `length` bytes at `position` of the open archive, fewer only where the file ends. */
export function readAt(fd: number, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  return new Promise((resolve, reject) => {
    const more = (filled: number) => {
      if (filled === length) return resolve(buffer);
      read(fd, buffer, filled, length - filled, position + filled, (err, n) => {
        if (err) reject(err);
        else if (n === 0) resolve(buffer.subarray(0, filled));
        else more(filled + n);
      });
    };
    more(0);
  });
}

/**
 * `length` bytes from `start`, read through the shared descriptor. Not an fs ReadStream on it: destroying one (an
 * error, a cancel) closes the descriptor under the entries still being read beside it, whatever `autoClose` says.
 */
export async function* readRange(fd: number, start: number, length: number): AsyncGenerator<Buffer> {
  for (let pos = start, end = start + length; pos < end; ) {
    const piece = await readAt(fd, pos, Math.min(READ_CHUNK, end - pos));
    if (piece.length === 0) throw new UpdateError(`the zip archive ended inside the data at offset ${pos}`);
    pos += piece.length;
    yield piece;
  }
}

/** The entry's data, checked against the central directory's size and CRC-32 as it passes; `stop` runs at the end. */
async function* checkedContents(entry: Entry, data: AsyncIterable<Buffer>, stop: () => void): AsyncGenerator<Buffer> {
  let crc = 0;
  let size = 0;
  try {
    for await (const chunk of data) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      if (size > entry.uncompressedSize) throw tooLarge(entry);
      yield chunk;
    }
  } finally {
    stop();
  }
  if (size !== entry.uncompressedSize)
    throw new UpdateError(`zip entry "${entry.fileName}" is shorter than its recorded size`);
  if (crc >>> 0 !== entry.crc32 >>> 0) throw new UpdateError(`zip entry "${entry.fileName}" fails its CRC check`);
}

function tooLarge(entry: Entry, cause?: unknown): UpdateError {
  return new UpdateError(`zip entry "${entry.fileName}" is larger than its recorded size`, { cause });
}

/** What the small entries' reads fetch at once: the bytes of many entries lying one after the other. */
const SPAN_BYTES = 1 << 20;

/** Reads of `length` bytes at `position` of an archive, fewer only where the file ends. */
export type ArchiveReads = (position: number, length: number) => Promise<Buffer>;

/** The archive being extracted: its descriptor, size, and the reads its small entries go through. */
export interface OpenArchive {
  fd: number;
  size: number;
  read: ArchiveReads;
}

/**
 * Reads of an open archive served from spans of SPAN_BYTES read ahead: a build's small entries lie one after the
 * other, so one read serves dozens of them, where a read each was some 1,600 thread-pool trips for a 200 MB build.
 * The last two spans are kept, as entries written side by side ask a little out of order.
 */
export function spanReads(fd: number, fileSize: number): ArchiveReads {
  let spans: Array<{ start: number; end: number; data: Promise<Buffer> }> = [];
  return async (position, length) => {
    const end = position + length;
    const hit = spans.find((s) => s.start <= position && end <= s.end);
    if (hit) return (await hit.data).subarray(position - hit.start, end - hit.start);
    if (length >= SPAN_BYTES) return readAt(fd, position, length);
    const spanEnd = Math.min(fileSize, position + SPAN_BYTES);
    const span = { start: position, end: spanEnd, data: readAt(fd, position, spanEnd - position) };
    // A failed span is not kept: the read that wanted it reports the failure.
    span.data.catch(() => (spans = spans.filter((s) => s !== span)));
    spans = [span, ...spans.slice(0, 1)];
    return (await span.data).subarray(0, Math.min(length, span.end - position));
  };
}

/**
 * A small entry's packed bytes, read with its local header in one call (the header's extra field may be longer
 * than the central directory says: then a second read). The header is checked as yauzl checks it, failing as
 * yauzl does (a plain Error, which the extractor reports as a corrupt archive).
 */
async function packedSmall(read: ArchiveReads, fileSize: number, entry: Entry): Promise<Buffer> {
  const start = entry.relativeOffsetOfLocalHeader;
  const guess = LOCAL_HEADER_BYTES + entry.fileNameLength + entry.extraFieldLength + EXTRA_SLACK + entry.compressedSize;
  let got = await read(start, Math.max(0, Math.min(guess, fileSize - start)));
  if (got.length < LOCAL_HEADER_BYTES || got.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) {
    // Plain errors, as yauzl's own: the extractor words them as a corrupt archive.
    throw new Error(`invalid local file header of "${entry.fileName}" at offset ${start}`);
  }
  const dataStart = LOCAL_HEADER_BYTES + got.readUInt16LE(26) + got.readUInt16LE(28);
  const dataEnd = dataStart + entry.compressedSize;
  if (start + dataEnd > fileSize) throw new Error(`the data of "${entry.fileName}" overflows the file`);
  if (dataEnd > got.length) got = Buffer.concat([got, await read(start + got.length, dataEnd - got.length)]);
  return got.subarray(dataStart, dataEnd);
}

async function* smallData(archive: OpenArchive, entry: Entry): AsyncGenerator<Buffer> {
  const packed = await packedSmall(archive.read, archive.size, entry);
  if (entry.compressionMethod === STORED) {
    yield packed;
    return;
  }
  let data: Buffer;
  try {
    // The cap makes a lie about the unpacked size fail here, before it is inflated in full.
    data = inflateRawSync(packed, { maxOutputLength: entry.uncompressedSize + 1 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(entry, err);
    throw err;
  }
  yield data;
}

/**
 * The entry's contents, decompressed and checked (size and CRC-32 against the central directory). Small entries
 * are read whole (SMALL_ENTRY); a larger one is streamed: yauzl checks its local header, the data is read here in
 * large chunks and inflated on the thread pool.
 */
export async function openContents(zip: ZipFile, archive: OpenArchive, entry: Entry): Promise<EntryContents> {
  if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
    throw new UpdateError(
      `zip entry "${entry.fileName}" uses compression method ${entry.compressionMethod}; only stored and deflated entries are supported`,
    );
  }
  if (entry.compressedSize <= SMALL_ENTRY && entry.uncompressedSize <= SMALL_ENTRY) {
    return { chunks: checkedContents(entry, smallData(archive, entry), () => {}), stop: () => {} };
  }
  const { fileDataStart } = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
  const raw = Readable.from(readRange(archive.fd, fileDataStart, entry.compressedSize), { objectMode: false });
  // Each inflate stream allocates its chunk.
  const chunkSize = Math.min(INFLATE_CHUNK, Math.max(16 * 1024, entry.uncompressedSize));
  const data = entry.compressionMethod === DEFLATED ? raw.pipe(createInflateRaw({ chunkSize })) : raw;
  // pipe() passes no errors on: a failed read must end the inflate, or the entry would wait for it forever.
  if (data !== raw) raw.once('error', (err) => data.destroy(err));
  // Both ends, so no read through the shared descriptor outlives the entry.
  const stop = () => {
    raw.destroy();
    data.destroy();
  };
  return { chunks: checkedContents(entry, data, stop), stop };
}
