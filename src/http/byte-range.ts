/** One `Range: bytes=…` request header against a file of `size` bytes (RFC 9110 §14.1.2). */
export type ByteRange =
  /** No usable single range (absent, another unit, several ranges, malformed): send the whole file, 200. */
  | { kind: 'whole' }
  /** Bytes `start` to `end` inclusive: 206 with Content-Range. */
  | { kind: 'part'; start: number; end: number }
  /** A well-formed range that starts past the end: 416 with `Content-Range: bytes *\/size`. */
  | { kind: 'unsatisfiable' };

/**
 * Reads a single byte range; several ranges are answered with the whole file, which the RFC allows and which keeps
 * the answer a plain stream (no multipart body).
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return { kind: 'whole' };
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return { kind: 'whole' };
  const [, from, to] = m as unknown as [string, string, string];
  if (from === '' && to === '') return { kind: 'whole' };
  if (from === '') {
    // A suffix: the last `to` bytes.
    const n = Number(to);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (to !== '' && Number(to) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end };
}
