import { PassThrough, pipeline, Readable, Transform } from 'node:stream';
import { diskSpaceOf, formatBytes } from '../../store/disk-space.ts';
import { type BodySink, writeFileFrom } from '../fetch/download.ts';
import { DEFAULT_LIMITS, DiskSpaceError, ensureSpace, type SpaceLimits, unpackCap } from '../install/disk-guard.ts';
import { formatOfHead, HEAD_BYTES } from './extract.ts';
import { extractTar } from './tar.ts';

/**
 * Where a downloaded server archive goes as it arrives: a tar or tar.gz is extracted into `destDir` during the
 * download (no copy on disk); a zip (its directory is at its end) or anything unrecognised is saved to `archive`
 * (`extracted()` says which). A failed streamed extraction still reads the rest of the body, so the download's own
 * verdict (cut short, wrong hash) comes first. A known length is refused up front when the disk cannot hold it plus
 * the margin; a streamed tar declares nothing, so it stops at `limits.ceilingBytes` and is streamed only when the
 * disk has room for what it could plausibly unpack to (`roomToStream`), else saved and its headers summed first.
 */
export function archiveSink(archive: string, destDir: string, limits: SpaceLimits = DEFAULT_LIMITS) {
  let extracted = false;
  const sink: BodySink = async (body, signal, total) => {
    if (total !== null) {
      try {
        await ensureSpace(destDir, total + limits.marginBytes, 'the download');
      } catch (err) {
        body.destroy();
        throw err;
      }
    }
    const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    const { head, done } = await readHead(chunks);
    const all = Readable.from(replay(head, done ? null : chunks), { objectMode: false });
    const format = formatOfHead(head);
    const streamable = (format === 'gzip' || format === 'tar') && (await roomToStream(destDir, total, limits));
    if (!streamable) return writeFileFrom(capped(all, await downloadCap(destDir, total, limits)), archive, signal);
    extracted = true;
    await extractWhileReading(all, destDir, signal, format === 'gzip', unpackCap(null, limits));
  };
  return { sink, extracted: () => extracted };
}

/** What a saved download of unknown length may write, and which limit that is (its error's words). */
type DownloadCap = { bytes: number; limit: string };

/**
 * The most a saved download may write: a known length was checked against the free space above (and the transfer
 * stops at it); an unknown one stops at the ceiling of an unpacked build or the free space less the margin,
 * whichever is less, so an endless body cannot fill the disk.
 */
async function downloadCap(destDir: string, total: number | null, limits: SpaceLimits): Promise<DownloadCap | null> {
  if (total !== null) return null;
  const space = await diskSpaceOf(destDir).catch(() => null);
  const room = space ? Math.max(0, space.freeBytes - limits.marginBytes) : Number.POSITIVE_INFINITY;
  if (space && room < limits.ceilingBytes)
    return {
      bytes: room,
      limit: `all the free space (${formatBytes(space.freeBytes)}) less Updates.SpaceMarginMegabytes leaves`,
    };
  return { bytes: limits.ceilingBytes, limit: 'the most Updates.MaxUnpackedMegabytes allows' };
}

/** `body`, failing with DiskSpaceError(`cap`) once more than `cap.bytes` went through (null: no cap). */
function capped(body: Readable, cap: DownloadCap | null): Readable {
  if (cap === null) return body;
  let bytes = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes <= cap.bytes) return done(null, chunk);
      done(
        new DiskSpaceError(
          'cap',
          `the download of unknown length passed ${formatBytes(cap.bytes)}, ${cap.limit}; it was stopped and removed`,
        ),
      );
    },
  });
  return pipeline(body, limit, () => undefined);
}

/** How many times its download size a tar.gz is assumed to unpack to at most, for the choice to stream it. */
const PLAUSIBLE_RATIO = 20;

/**
 * Whether the disk of `destDir` holds what a tar of `total` bytes (null: unknown) could plausibly unpack to, with
 * the margin: a build compresses some 3 to 5 times. An archive beyond that still stops at the cap (tree.ts).
 */
async function roomToStream(destDir: string, total: number | null, limits: SpaceLimits): Promise<boolean> {
  const space = await diskSpaceOf(destDir).catch(() => null);
  if (!space) return true;
  const plausible = total === null ? limits.ceilingBytes : Math.min(limits.ceilingBytes, total * PLAUSIBLE_RATIO);
  return space.freeBytes >= plausible + limits.marginBytes;
}

async function readHead(chunks: AsyncIterator<Buffer>): Promise<{ head: Buffer; done: boolean }> {
  const parts: Buffer[] = [];
  let size = 0;
  while (size < HEAD_BYTES) {
    const next = await chunks.next();
    if (next.done) return { head: Buffer.concat(parts), done: true };
    parts.push(next.value);
    size += next.value.length;
  }
  return { head: Buffer.concat(parts), done: false };
}

async function* replay(head: Buffer, rest: AsyncIterator<Buffer> | null): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  if (!rest) return;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

async function extractWhileReading(
  body: Readable,
  destDir: string,
  signal: AbortSignal,
  gzip: boolean,
  capBytes: number,
): Promise<void> {
  const feed = new PassThrough({ highWaterMark: 1 << 18 });
  // The body may fail (a connection reset) before the extractor has attached to `feed` (it first reads the
  // staging folder): destroying `feed` with that error would then emit it to no listener and crash the thread
  // (the daemon, found by the soak; now the update worker). The error is rethrown below; the extractor finds it on
  // `feed.errored` when it attaches.
  feed.on('error', () => {});
  const extraction: { settled: boolean; error?: unknown } = { settled: false };
  const extracting = extractTar(feed, destDir, signal, gzip, capBytes).then(
    () => {
      extraction.settled = true;
    },
    (error: unknown) => void Object.assign(extraction, { settled: true, error }),
  );
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      // Once the extraction has ended, the rest is only read: the hash and the length still have to be judged.
      if (extraction.settled || feed.destroyed) continue;
      if (!feed.write(chunk)) await drainedOrClosed(feed, signal);
    }
    if (!feed.destroyed) feed.end();
  } catch (err) {
    // The extractor ends only on an end or an error of its input, never on a plain destroy.
    feed.destroy(err instanceof Error ? err : new Error(String(err)));
    await extracting;
    throw err;
  }
  await extracting;
  if (extraction.error !== undefined) throw extraction.error;
}

/** Resolves when `stream` drains or closes, or `signal` aborts (the timeout must end a stalled extraction too). */
function drainedOrClosed(stream: PassThrough, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || signal.aborted) return resolve();
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    signal.addEventListener('abort', done);
  });
}
