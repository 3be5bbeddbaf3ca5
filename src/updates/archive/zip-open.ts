import { close, fstat, open, read } from 'node:fs';
import { Readable } from 'node:stream';
import { fromRandomAccessReaderPromise, type Options, RandomAccessReader, type ZipFile } from 'yauzl';
import { readAt, readRange } from './zip-data.ts';

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_BYTES = 22;
/** The end record, a comment of up to 64 KB in it, and a zip64 locator before it: what yauzl reads first. */
const TAIL_BYTES = 20 + EOCD_BYTES + 0xffff;
/** A central directory at most this large is read into memory in one call (a build of 1,600 files: ~150 KB). */
const MAX_CACHED = 16 << 20;

type ReadCallback = (err: Error | null, bytesRead?: number) => void;

const cb =
  <T>(resolve: (value: T) => void, reject: (err: Error) => void) =>
  (err: Error | null, value: T) =>
    err ? reject(err) : resolve(value);

/**
 * Reads a zip through one descriptor, serving the central directory (and what follows it) from memory. yauzl reads
 * each entry's central record with two reads of its own, and an extraction lists the directory twice (its declared
 * size first): for a build of 1,600 files that was some 6,400 thread-pool trips before and between the files.
 */
class TailCachedReader extends RandomAccessReader {
  constructor(
    readonly fd: number,
    private readonly tail: Buffer,
    private readonly tailStart: number,
  ) {
    super();
  }

  private cached(position: number, length: number): Buffer | null {
    const from = position - this.tailStart;
    return from >= 0 && from + length <= this.tail.length ? this.tail.subarray(from, from + length) : null;
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: ReadCallback): void {
    const hit = this.cached(position, length);
    if (hit) {
      hit.copy(buffer, offset);
      process.nextTick(callback, null, length);
      return;
    }
    read(this.fd, buffer, offset, length, position, (err, n) => callback(err, n));
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const hit = this.cached(start, end - start);
    if (hit) return Readable.from([hit], { objectMode: false });
    // Not an fs ReadStream on the descriptor: destroying one would close it under the other entries' reads.
    return Readable.from(readRange(this.fd, start, end - start), { objectMode: false });
  }

  override close(callback: (err: Error | null) => void): void {
    // Never an error: yauzl would emit it where nothing listens any more.
    close(this.fd, () => callback(null));
  }
}

/**
 * Where the central directory starts, from the end record found in `tail` (the file's last bytes, from
 * `tailStart`), or null when there is none to trust (no record, a zip64 archive, an offset out of the file): yauzl
 * then reads what it needs from the file and judges the archive itself.
 */
function directoryStart(tail: Buffer, tailStart: number, size: number): number | null {
  for (let at = tail.length - EOCD_BYTES; at >= 0; at--) {
    if (tail.readUInt32LE(at) !== EOCD_SIGNATURE) continue;
    const offset = tail.readUInt32LE(at + 16);
    return offset === 0xffffffff || offset > tailStart + at || size - offset > MAX_CACHED ? null : offset;
  }
  return null;
}

/**
 * Opens a zip for yauzl with its central directory read into memory in one call. `fd` reads entry data; it is
 * closed with the ZipFile (`autoClose: false` means by `zip.close()`), or here when the archive cannot be opened.
 */
export async function openZip(path: string, options: Options): Promise<{ zip: ZipFile; fd: number }> {
  const fd = await new Promise<number>((resolve, reject) => open(path, 'r', cb(resolve, reject)));
  try {
    const size = await new Promise<number>((resolve, reject) =>
      fstat(fd, (err, stats) => (err ? reject(err) : resolve(stats.size))),
    );
    let tailStart = Math.max(0, size - TAIL_BYTES);
    let tail = await readAt(fd, tailStart, size - tailStart);
    const start = directoryStart(tail, tailStart, size);
    if (start !== null && start < tailStart) {
      tail = Buffer.concat([await readAt(fd, start, tailStart - start), tail]);
      tailStart = start;
    }
    const zip = await fromRandomAccessReaderPromise(new TailCachedReader(fd, tail, tailStart), size, options);
    return { zip, fd };
  } catch (err) {
    close(fd, () => {});
    throw err;
  }
}
