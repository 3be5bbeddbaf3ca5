import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { openPromise } from 'yauzl';
import { UpdateError } from '../../errors.ts';

/**
 * What an archive says it unpacks to, read before anything is written: the uncompressed sizes of a zip's central
 * directory, or the header sizes of a tar found in one listing pass (a tar.gz is inflated for it, not written).
 * A damaged archive is an UpdateError here, as it would be in the extraction.
 */
export async function declaredSize(
  archive: string,
  format: 'zip' | 'tar' | 'gzip',
  signal?: AbortSignal,
): Promise<number> {
  return format === 'zip' ? zipDeclared(archive) : tarDeclared(archive, format === 'gzip', signal);
}

async function zipDeclared(archive: string): Promise<number> {
  let total = 0;
  try {
    // Names are not decoded (nor checked): the extraction refuses a bad one, naming it.
    const zip = await openPromise(archive, { autoClose: false, decodeStrings: false });
    try {
      for await (const entry of zip.eachEntry()) total += entry.uncompressedSize;
    } finally {
      zip.close();
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UpdateError(`the zip archive is corrupt or unreadable (${message})`, { cause: err });
  }
  return total;
}

/** One pass over a (gzipped) tar, reading the headers and skipping the data; `signal` ends it early. */
async function tarDeclared(archive: string, gzip: boolean, signal?: AbortSignal): Promise<number> {
  let total = 0;
  const parser = new Parser({ strict: true });
  parser.on('entry', (entry: ReadEntry) => {
    total += entry.size ?? 0;
    entry.resume();
  });
  const file = createReadStream(archive, { highWaterMark: 1 << 18 });
  try {
    if (gzip) await pipeline(file, createGunzip({ chunkSize: 1 << 18 }), parser, { signal });
    else await pipeline(file, parser, { signal });
  } catch (err) {
    if (signal?.aborted) throw new UpdateError('extraction was cancelled', { cause: signal.reason });
    const message = err instanceof Error ? err.message : String(err);
    throw new UpdateError(`the tar archive is corrupt or unreadable (${message})`, { cause: err });
  }
  return total;
}
