import { PassThrough, pipeline, Readable, Transform } from 'node:stream';
import { diskSpaceOf, formatBytes } from '../../store/disk-space.ts';
import { type BodySink, writeFileFrom } from '../fetch/download.ts';
import { DEFAULT_LIMITS, DiskSpaceError, ensureSpace, type SpaceLimits, unpackCap } from '../install/disk-guard.ts';
import { formatOfHead, HEAD_BYTES } from './extract.ts';
import { extractTar } from './tar.ts';

/**
 * Where a download goes as it arrives: a tar or tar.gz is extracted into `destDir` (no copy on disk); a zip (its
 * directory is at its end) or anything else is saved to `archive` (`extracted()` says which). A failed streamed
 * extraction still reads the body, so the download's own verdict comes first. A known length beyond the free space
 * is refused up front; a tar is streamed only when the disk holds what it could plausibly unpack to (else saved, its
 * headers summed first), and stops at the ceiling.
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
    if (!streamable) return writeFileFrom(await capped(all, destDir, total, limits), archive, signal);
    extracted = true;
    await extractWhileReading(all, destDir, signal, format === 'gzip', unpackCap(null, limits));
  };
  return { sink, extracted: () => extracted };
}

/**
 * A saved download of unknown length (a known one was checked above) stops at the ceiling or the free space less
 * the margin, whichever is less, so an endless body cannot fill the disk.
 */
async function capped(body: Readable, destDir: string, total: number | null, limits: SpaceLimits): Promise<Readable> {
  if (total !== null) return body;
  const space = await diskSpaceOf(destDir).catch(() => null);
  const room = space ? Math.max(0, space.freeBytes - limits.marginBytes) : Number.POSITIVE_INFINITY;
  const [cap, limit] =
    space && room < limits.ceilingBytes
      ? [room, `all the free space (${formatBytes(space.freeBytes)}) less Updates.SpaceMarginMegabytes leaves`]
      : [limits.ceilingBytes, 'the most Updates.MaxUnpackedMegabytes allows'];
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes <= cap) return done(null, chunk);
      const why = `the download of unknown length passed ${formatBytes(cap)}, ${limit}; it was stopped and removed`;
      done(new DiskSpaceError('cap', why));
    },
  });
  return pipeline(body, meter, () => undefined);
}

/** A build compresses some 3 to 5 times; one beyond 20 still stops at the cap (tree.ts). */
const PLAUSIBLE_RATIO = 20;

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
  // The body may fail before the extractor attaches to `feed`: the error, with no listener, would crash the thread
  // (found by the soak). It is rethrown below; the extractor finds it on `feed.errored`.
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
      // Once the extraction ended, the rest is only read: the hash and length still have to be judged.
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

/** Resolves when `stream` drains or closes, or `signal` aborts (the timeout ends a stalled extraction too). */
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
