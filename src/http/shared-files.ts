import type { Stats } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeSegments, resolveInside } from './safe-path.ts';
import type { FileListing } from './schemas.ts';

/** At most this many entries of one folder are listed; the rest are counted as `truncated`. */
const MAX_LISTED = 5000;

type FileEntry = FileListing['entries'][number];

/**
 * Where the still-percent-encoded `rawSegments` (the path after `files/`) lead: the root (the list of shared
 * folders), or a real path inside one shared folder, checked as `binaries/` paths are; outside `folders`: 403.
 */
export async function locate(
  instanceDir: string,
  folders: readonly string[],
  rawSegments: readonly string[],
): Promise<
  | { kind: 'root' }
  | { kind: 'inside'; path: string; relative: string }
  | { kind: 'refused'; status: 400 | 403 | 404; reason: string }
> {
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
  return found ? { kind: 'inside', path: found, relative } : { kind: 'refused', status: 404, reason: 'not found' };
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

/** A folder's visible files and folders, by name; a symlink only when it resolves inside, as a download would. */
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
      s = inside ? await stat(inside).catch(() => null) : null;
    }
    if (s && (s.isFile() || s.isDirectory())) entries.push(entryOf(name, s));
  }
  return { path: relative, entries, truncated };
}
