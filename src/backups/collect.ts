import { copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import { dirname, join, posix, relative, sep } from 'node:path';
import { hashFile } from '../regular-file.ts';
import type { BackupFile } from './manifest.ts';
import { copySqliteDatabase, isSqliteDatabase, SQLITE_SIDECARS, type SqliteCopyOptions } from './sqlite-copy.ts';

export const SNAPSHOT_PATHS = ['data', 'config.toml'] as const;

/** A bound on the walk, not a limit anyone meets. */
const MAX_ENTRIES = 1_000_000;

interface Collected {
  files: BackupFile[];
  skipped: { path: string; reason: string }[];
  bytes: number;
}

interface CollectOptions {
  instanceDir: string;
  /** Empty; the copies go there as laid out in the instance folder. */
  stagingDir: string;
  sqlite: SqliteCopyOptions;
  /**
   * No server runs: without `sqlite3` a database and its sidecars are copied raw. Asked at the copy itself: a
   * snapshot that waited its turn may meet a server launched meanwhile.
   */
  quiet: boolean | (() => boolean);
  sources?: SnapshotSources;
}

/** Copies what a snapshot takes into `stagingDir` (databases with the online backup) and hashes each copy. */
export async function collect(opts: CollectOptions): Promise<Collected> {
  const listed = opts.sources ?? (await listSources(opts.instanceDir));
  const out: Collected = { files: [], skipped: listed.skipped, bytes: 0 };
  const sources = listed.files;
  const databases: string[] = [];
  for (const rel of sources) if (await isSqliteDatabase(join(opts.instanceDir, rel))) databases.push(rel);
  const sidecars = new Set(databases.flatMap((db) => SQLITE_SIDECARS.map((s) => db + s)));
  // Databases first: whether their sidecars go along depends on how they were copied.
  let raw = false;
  for (const rel of databases) {
    const target = await stage(rel, opts);
    raw = (await copyDatabase(join(opts.instanceDir, rel), target, opts)) || raw;
    await record(rel, target, true, out);
  }
  for (const rel of sources) {
    if (databases.includes(rel) || (sidecars.has(rel) && !raw)) continue;
    const target = await stage(rel, opts);
    await copyFile(join(opts.instanceDir, rel), target);
    await record(rel, target, false, out);
  }
  out.files.sort((a, b) => (a.path < b.path ? -1 : 1));
  return out;
}

async function stage(rel: string, opts: CollectOptions): Promise<string> {
  const target = join(opts.stagingDir, rel);
  await mkdir(dirname(target), { recursive: true });
  return target;
}

async function record(rel: string, target: string, sqlite: boolean, out: Collected): Promise<void> {
  const { bytes, sha256 } = await hashFile(target);
  out.files.push({ path: toPosix(rel), bytes, sha256, ...(sqlite ? { sqlite: true } : {}) });
  out.bytes += bytes;
}

/** The online backup, or a raw copy when `sqlite3` is missing and the files are quiet (true: sidecars go along). */
async function copyDatabase(source: string, target: string, opts: CollectOptions): Promise<boolean> {
  try {
    await copySqliteDatabase(source, target, opts.sqlite);
    return false;
  } catch (err) {
    const missing = err instanceof Error && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
    const quiet = typeof opts.quiet === 'function' ? opts.quiet() : opts.quiet;
    if (!(quiet && missing)) throw err;
    await copyFile(source, target);
    return true;
  }
}

interface SnapshotSources {
  files: string[];
  bytes: number;
  skipped: { path: string; reason: string }[];
}

/** The regular files under SNAPSHOT_PATHS; links and the like are noted, never followed. */
export async function listSources(instanceDir: string): Promise<SnapshotSources> {
  const out: SnapshotSources = { files: [], bytes: 0, skipped: [] };
  for (const top of SNAPSHOT_PATHS) {
    const info = await lstat(join(instanceDir, top)).catch(() => null);
    if (info?.isFile()) out.files.push(top);
    out.bytes += info?.isFile() ? info.size : 0;
    if (!info?.isDirectory()) continue;
    const entries = await readdir(join(instanceDir, top), { recursive: true, withFileTypes: true });
    if (entries.length > MAX_ENTRIES) throw new Error(`${top}/ holds more than ${MAX_ENTRIES} entries: not backed up`);
    for (const e of entries) {
      const rel = relative(instanceDir, join(e.parentPath, e.name));
      if (e.isFile()) {
        out.files.push(rel);
        out.bytes += (await lstat(join(instanceDir, rel)).catch(() => null))?.size ?? 0;
      } else if (!e.isDirectory())
        out.skipped.push({ path: toPosix(rel), reason: e.isSymbolicLink() ? 'a symbolic link' : 'not a regular file' });
    }
  }
  out.files.sort();
  return out;
}

const toPosix = (rel: string): string => rel.split(sep).join(posix.sep);
