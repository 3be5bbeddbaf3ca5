import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline, Readable, Transform } from 'node:stream';
import { pipeline as pipelineAsync } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { monotonicMs } from '../../clock.ts';
import { rootCause, UpdateError } from '../../errors.ts';
import { CREATE_NEW, clearForWrite } from '../../regular-file.ts';

export interface FetchOptions {
  url: string;
  /** Expected SHA-256 in hex (any case). Given as '' it refuses: an empty hash cannot vouch for anything. */
  sha256?: string;
  headers?: Record<string, string>;
  /** For the whole transfer, headers and body. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Called at most every PROGRESS_EVERY_MS while bytes arrive, and once at the end. */
  onProgress?: (bytes: number, total: number | null) => void;
}

const PROGRESS_EVERY_MS = 250;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * fetch with redirects followed here (at most 5, Authorization and Cookie dropped off the origin), so an error names
 * the last hop without its query (a signed link's token); identity encoding, so the hash and length hold.
 */
export async function get(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
  let current = new URL(url);
  let sent: Record<string, string> = { ...headers, 'accept-encoding': 'identity' };
  for (let hop = 0; ; hop++) {
    const res = await fetch(current, { headers: sent, signal, redirect: 'manual' });
    const location = res.headers.get('location');
    if (!REDIRECTS.has(res.status) || location === null) return res;
    await res.body?.cancel();
    const next = new URL(location, current);
    if (hop >= MAX_REDIRECTS) {
      throw new Error(`more than ${MAX_REDIRECTS} redirects, the last to ${next.origin}${next.pathname}`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:')
      throw new Error(`redirected to a ${next.protocol} URL`);
    if (next.origin !== current.origin) {
      sent = Object.fromEntries(Object.entries(sent).filter(([name]) => !/^(authorization|cookie)$/i.test(name)));
    }
    current = next;
  }
}

/** A URL without credentials or query (secrets), for messages. */
export function describeUrl(url: string): string {
  if (!URL.canParse(url)) return '(invalid URL)';
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
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

/** Reads the body (being hashed) to its end; `total` is the announced length, or null. */
export type BodySink = (body: Readable, signal: AbortSignal, total: number | null) => Promise<void>;

/**
 * Fetches `url` into `sink` while hashing it. UpdateError on a non-2xx answer, the timeout, cancellation, a short
 * body or a hash mismatch, which take precedence over the sink's own failure (a sink that fails part-way still reads
 * the rest, so a damaged download is told as one).
 */
export async function fetchVerified(opts: FetchOptions, sink: BodySink): Promise<{ bytes: number; sha256: string }> {
  const where = describeUrl(opts.url);
  const expected = checkExpectedHash(opts.sha256, where);
  if (opts.signal.aborted) throw new UpdateError(`download of ${where} was cancelled`, { cause: opts.signal.reason });
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, timeout]);
  let bytes = 0;
  let total: number | null = null;
  let actual: string | null = null;
  const mismatch = (): UpdateError | null =>
    expected !== undefined && actual !== null && actual !== expected
      ? new UpdateError(
          `download of ${where} does not match its expected SHA-256 (expected ${expected}, got ${actual}); ` +
            'the file on the server changed or is damaged; republish it or fix the hash',
        )
      : null;
  const cutShort = () => `download of ${where} was cut short: got ${bytes} of ${total} bytes`;
  const explain = (err: unknown): UpdateError => {
    if (opts.signal.aborted) return new UpdateError(`download of ${where} was cancelled`, { cause: err });
    if (timeout.aborted) {
      return new UpdateError(
        `download of ${where} did not finish within ${opts.timeoutMs / 1000} s; raise Updates.DownloadTimeoutSeconds if the link is slow`,
        { cause: err },
      );
    }
    if (total !== null && bytes < total) return new UpdateError(cutShort(), { cause: err });
    if (err instanceof UpdateError) return mismatch() ?? err;
    const why = rootCause(err) || (err instanceof Error ? err.message : '');
    return new UpdateError(`download of ${where} failed${why ? `: ${why}` : ''}`, { cause: err });
  };

  try {
    const res = await get(opts.url, opts.headers ?? {}, signal);
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw new UpdateError(`download of ${where} answered HTTP ${res.status} ${res.statusText}`.trim());
    }
    // A server that encodes the body although asked not to is not length-checked.
    const lengthHeader = res.headers.get('content-length');
    total =
      lengthHeader !== null && /^\d+$/.test(lengthHeader) && !res.headers.has('content-encoding')
        ? Number(lengthHeader)
        : null;
    const hash = createHash('sha256');
    let lastReport = Number.NEGATIVE_INFINITY;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        hash.update(chunk);
        const now = monotonicMs();
        if (opts.onProgress && now - lastReport >= PROGRESS_EVERY_MS) {
          lastReport = now;
          opts.onProgress(bytes, total);
        }
        done(null, chunk);
      },
      flush(done) {
        actual = hash.digest('hex');
        done();
      },
    });
    await sink(
      pipeline(Readable.fromWeb(res.body as ReadableStream<Uint8Array>), meter, () => undefined),
      signal,
      total,
    );
    if (total !== null && bytes !== total) throw new UpdateError(cutShort());
    if (actual === null) throw new UpdateError(`download of ${where} was not read to its end`);
    const wrong = mismatch();
    if (wrong) throw wrong;
    opts.onProgress?.(bytes, total);
    return { bytes, sha256: actual };
  } catch (err) {
    throw explain(err);
  }
}

export async function writeFileFrom(body: Readable, dest: string, signal: AbortSignal): Promise<void> {
  await clearForWrite(dest);
  return pipelineAsync(body, createWriteStream(dest, { flags: CREATE_NEW }), { signal });
}
