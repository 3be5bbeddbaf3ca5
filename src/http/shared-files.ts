import type { Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeSegments, resolveInside } from './safe-path.ts';
import type { FileListing } from './schemas.ts';

/** At most this many entries of one folder are listed; the rest are counted as `truncated`. */
export const MAX_LISTED = 5000;

type FileEntry = FileListing['entries'][number];

export type Located =
  | { kind: 'root' }
  | { kind: 'inside'; path: string; relative: string }
  /** 400: the path itself is refused; 403: not under a shared folder; 404: nothing visible there, or it leads out. */
  | { kind: 'refused'; status: 400 | 403 | 404; reason: string };

/**
 * Where the still-percent-encoded `rawSegments` (the path after `files/`) lead: the root (the list of shared
 * folders), or a real path inside one shared folder. The segments go through the same checks as `binaries/`
 * (safe-path.ts): encoded separators, dot segments, NUL and hidden names are refused, and the real path, symlinks
 * followed, must stay inside the shared folder it starts with; a folder not in `folders` is refused with 403.
 */
export async function locate(
  instanceDir: string,
  folders: readonly string[],
  rawSegments: readonly string[],
): Promise<Located> {
  // A trailing slash names the same folder; decodeSegments reads it as "not a file".
  const raw = rawSegments.at(-1) === '' ? rawSegments.slice(0, -1) : rawSegments;
  if (raw.length === 0) return { kind: 'root' };
  const decoded = decodeSegments(raw);
  if (!decoded.ok) return { kind: 'refused', status: decoded.status, reason: decoded.reason };
  const segments = decoded.segments;
  // The longest shared folder the path starts with (`data/replays` before a shared `data`).
  const folder = [...folders]
    .map((f) => f.split('/'))
    .filter((f) => f.length <= segments.length && f.every((s, i) => s === segments[i]))
    .sort((a, b) => b.length - a.length)[0];
  if (!folder)
    return { kind: 'refused', status: 403, reason: `not a shared folder (Files.Folders: ${folders.join(', ')})` };
  const root = join(instanceDir, ...folder);
  const relative = segments.join('/');
  const rest = segments.slice(folder.length);
  if (rest.length === 0) {
    const real = await realpath(root).catch(() => null);
    return real ? { kind: 'inside', path: real, relative } : { kind: 'refused', status: 404, reason: 'not found' };
  }
  const found = await resolveInside(root, rest);
  return found.kind === 'ok'
    ? { kind: 'inside', path: found.path, relative }
    : { kind: 'refused', status: 404, reason: 'not found' };
}

const entryOf = (name: string, s: Stats): FileEntry => ({
  name,
  type: s.isDirectory() ? 'folder' : 'file',
  size: s.isDirectory() ? 0 : s.size,
  modified: s.mtime.toISOString(),
});

/** The shared folders themselves, each that exists. */
export async function listRoot(instanceDir: string, folders: readonly string[]): Promise<FileListing> {
  const entries: FileEntry[] = [];
  for (const f of folders) {
    const s = await stat(join(instanceDir, f)).catch(() => null);
    if (s?.isDirectory()) entries.push(entryOf(f, s));
  }
  return { path: '', entries, truncated: 0 };
}

/**
 * A folder's visible files and folders, by name. A symlink is listed only when it resolves inside the folder, as
 * a download through it would; hidden names and anything else (sockets, FIFOs) are left out.
 */
export async function listFolder(real: string, relative: string): Promise<FileListing> {
  const names = (await readdir(real)).filter((n) => !n.startsWith('.')).sort();
  const entries: FileEntry[] = [];
  let truncated = 0;
  for (const name of names) {
    if (entries.length >= MAX_LISTED) {
      truncated++;
      continue;
    }
    let s = await lstat(join(real, name)).catch(() => null);
    if (s?.isSymbolicLink()) {
      const inside = await resolveInside(real, [name]);
      s = inside.kind === 'ok' ? await stat(inside.path).catch(() => null) : null;
    }
    if (s && (s.isFile() || s.isDirectory())) entries.push(entryOf(name, s));
  }
  return { path: relative, entries, truncated };
}
