import { realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';

export type SafePath =
  | { kind: 'ok'; path: string }
  /** The request path itself is not acceptable (traversal, encoded separators, bad escapes): 400. */
  | { kind: 'bad'; reason: string }
  /** Nothing servable there (missing, or resolves outside the folder): 404. */
  | { kind: 'missing' };

/**
 * Decodes the still-percent-encoded segments of a request path and checks each one: no empty, `.` or `..`
 * segments, no `/` or `\` smuggled in encoded, no NUL, no hidden name (404). The WHATWG URL parser already folds literal and `%2e%2e`
 * dot-segments, but `..%2f` survives it, so segments are checked after decoding.
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
 * Resolves `segments` under `root` and verifies that the real path (symlinks followed) stays strictly inside
 * the real root. Anything escaping is reported as missing, so a probe learns nothing about the outside.
 */
export async function resolveInside(root: string, segments: readonly string[]): Promise<SafePath> {
  let realRoot: string;
  let real: string;
  try {
    realRoot = await realpath(root);
    real = await realpath(join(realRoot, ...segments));
  } catch {
    return { kind: 'missing' };
  }
  if (!real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) return { kind: 'missing' };
  return { kind: 'ok', path: real };
}
