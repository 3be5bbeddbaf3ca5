import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { UpdateError } from '../errors.ts';

export interface DownloadOptions {
  url: string;
  /** File to write (inside the instance folder, e.g. `<dir>/.update/download.part`); removed on any failure. */
  dest: string;
  /** Expected SHA-256 in hex (any case). Given as '' it refuses: an empty hash cannot vouch for anything. */
  sha256?: string;
  headers?: Record<string, string>;
  /** Limit for the whole transfer, headers and body; a stalled transfer runs into it too. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Called at most every PROGRESS_EVERY_MS while bytes arrive, and once at the end. */
  onProgress?: (bytes: number, total: number | null) => void;
}

const PROGRESS_EVERY_MS = 250;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** Where a URL points, without credentials or query (those may hold secrets), for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function checkExpectedHash(sha256: string | undefined, where: string): string | undefined {
  if (sha256 === undefined) return undefined;
  if (sha256.trim() === '') {
    throw new UpdateError(`refusing ${where}: its expected SHA-256 is empty, so the download could not be verified`);
  }
  if (!HEX_SHA256.test(sha256.trim())) {
    throw new UpdateError(`refusing ${where}: its expected SHA-256 "${sha256}" is not 64 hex digits`);
  }
  return sha256.trim().toLowerCase();
}

/**
 * Streams `url` into `dest` while hashing it; memory stays flat whatever the size. Throws UpdateError (and removes
 * `dest`) on a non-2xx answer, a body shorter than its Content-Length, the timeout, cancellation or a hash mismatch.
 */
export async function downloadVerified(opts: DownloadOptions): Promise<{ bytes: number; sha256: string }> {
  const where = describeUrl(opts.url);
  const expected = checkExpectedHash(opts.sha256, where);
  if (opts.signal.aborted) throw new UpdateError(`download of ${where} was cancelled`, { cause: opts.signal.reason });
  // ofetch/fetch only honour one signal: merge cancellation with the transfer limit (STYLE.md §1.3).
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, timeout]);
  let bytes = 0;
  let total: number | null = null;
  const explain = (err: unknown): UpdateError => {
    if (err instanceof UpdateError) return err;
    if (opts.signal.aborted) return new UpdateError(`download of ${where} was cancelled`, { cause: err });
    if (timeout.aborted) {
      return new UpdateError(
        `download of ${where} did not finish within ${opts.timeoutMs / 1000} s; raise Updates.DownloadTimeoutSeconds if the link is slow`,
        { cause: err },
      );
    }
    if (total !== null && bytes < total) {
      return new UpdateError(`download of ${where} was cut short: got ${bytes} of ${total} bytes`, { cause: err });
    }
    return new UpdateError(`download of ${where} failed`, { cause: err });
  };

  try {
    await mkdir(dirname(opts.dest), { recursive: true });
    const res = await fetch(opts.url, { headers: opts.headers, signal, redirect: 'follow' });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      throw new UpdateError(`download of ${where} answered HTTP ${res.status} ${res.statusText}`.trim());
    }
    const lengthHeader = res.headers.get('content-length');
    // fetch decodes a Content-Encoding transparently; the header then counts encoded bytes, so only compare raw bodies.
    total = lengthHeader !== null && /^\d+$/.test(lengthHeader) && !res.headers.get('content-encoding')
      ? Number(lengthHeader) : null;
    const hash = createHash('sha256');
    let lastReport = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        hash.update(chunk);
        const now = Date.now();
        if (opts.onProgress && now - lastReport >= PROGRESS_EVERY_MS) {
          lastReport = now;
          opts.onProgress(bytes, total);
        }
        done(null, chunk);
      },
    });
    // The global fetch's ReadableStream type (lib.dom) and node:stream/web's differ only on paper.
    const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
    await pipeline(body, meter, createWriteStream(opts.dest), { signal });
    if (total !== null && bytes !== total) {
      throw new UpdateError(`download of ${where} was cut short: got ${bytes} of ${total} bytes`);
    }
    const actual = hash.digest('hex');
    if (expected !== undefined && actual !== expected) {
      throw new UpdateError(
        `download of ${where} does not match its expected SHA-256 (expected ${expected}, got ${actual}); ` +
          'the file on the server changed or is damaged; republish it or fix the hash',
      );
    }
    opts.onProgress?.(bytes, total);
    return { bytes, sha256: actual };
  } catch (err) {
    await rm(opts.dest, { force: true });
    throw explain(err);
  }
}
