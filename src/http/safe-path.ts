import { constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Context } from 'hono';
import { NotRegularFileError, openRegular } from '../regular-file.ts';

/**
 * Decodes the still-percent-encoded segments of a request path and checks each one: no empty, `.` or `..` segment,
 * no `/` or `\` smuggled in encoded, no NUL, no hidden name (404). The WHATWG URL parser folds `%2e%2e`, but
 * `..%2f` survives it, so segments are checked after decoding.
 */
export function decodeSegments(
  rawSegments: readonly string[],
): { ok: true; segments: string[] } | { ok: false; status: 400 | 404; reason: string } {
  // A trailing slash (or nothing at all) names a folder, and folders are never listed.
  if (rawSegments.length === 0 || rawSegments.at(-1) === '') return { ok: false, status: 404, reason: 'not a file' };
  const segments: string[] = [];
  for (const raw of rawSegments) {
    let s: string;
    try {
      s = decodeURIComponent(raw);
    } catch {
      return { ok: false, status: 400, reason: 'bad percent-encoding in path' };
    }
    if (s === '' || s === '.' || s === '..') return { ok: false, status: 400, reason: 'empty or dot segment in path' };
    if (/[/\\\0]/.test(s)) return { ok: false, status: 400, reason: 'separator or NUL inside a path segment' };
    // Hidden names (`.git/`, an editor's `.swp`) are never served, as ASP.NET's static files refuse them too.
    if (s.startsWith('.')) return { ok: false, status: 404, reason: 'hidden file' };
    segments.push(s);
  }
  return { ok: true, segments };
}

/**
 * The real path (symlinks followed) of `segments` under `root`, or null when it is missing or leads outside the
 * real root: both look alike, so a probe learns nothing about the outside.
 */
export async function resolveInside(root: string, segments: readonly string[]): Promise<string | null> {
  try {
    const realRoot = await realpath(root);
    const real = await realpath(join(realRoot, ...segments));
    return real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep) ? real : null;
  } catch {
    return null;
  }
}

/**
 * Opens a resolved file or folder without following a symlink at the last step (O_NOFOLLOW: the checked real path
 * cannot be swapped before the open) and without waiting on a named pipe: null when it is gone, `refused` when it is
 * neither. The caller closes the handle, or `sendFile` does.
 */
export async function openLocated(
  path: string,
): Promise<{ file: FileHandle; stats: Stats } | { refused: string } | null> {
  try {
    return await openRegular(path, constants.O_RDONLY | constants.O_NOFOLLOW, { folders: true });
  } catch (err) {
    return err instanceof NotRegularFileError ? { refused: 'not a regular file or folder' } : null;
  }
}

/** Bytes `range` of an open file (all of it by default); `headers` carry its Content-Length. */
export async function sendFile(
  c: Context,
  file: FileHandle,
  status: 200 | 206,
  headers: Record<string, string>,
  range?: { start: number; end: number },
): Promise<Response> {
  // Hono answers HEAD by running the GET handler and dropping the body; do not open a stream nobody reads.
  if (c.req.method === 'HEAD' || headers['Content-Length'] === '0') {
    await file.close();
    return c.body(null, status, headers);
  }
  // createReadStream closes the handle at the end or when the client goes away. @types/node's web ReadableStream
  // and the global one are the same object at runtime but distinct types.
  const web = Readable.toWeb(file.createReadStream(range)) as NodeReadableStream<Uint8Array>;
  return c.body(web as unknown as ReadableStream, status, headers);
}
