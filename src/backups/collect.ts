import { execFile } from 'node:child_process';
import { copyFile, lstat, readdir } from 'node:fs/promises';
import { dirname, join, posix, relative, sep } from 'node:path';
import { describeError } from '../errors.ts';
import { makeDir } from '../make-dir.ts';
import { hashFile, readRegularHead } from '../regular-file.ts';
import type { BackupFile } from './manifest.ts';

export const SNAPSHOT_PATHS = ['data', 'config.toml'] as const;

/** A bound on the walk, not a limit anyone meets. */
const MAX_ENTRIES = 1_000_000;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** What they hold, the online backup holds. */
const SQLITE_SIDECARS = ['-wal', '-shm', '-journal'] as const;

export interface SqliteCopyOptions {
  program: string;
  timeoutMs: number;
}

type Skipped = { path: string; reason: string }[];

/** Copies what a snapshot takes into `stagingDir` (empty; laid out as the instance folder) and hashes each copy. */
export async function collect(opts: {
  instanceDir: string;
  stagingDir: string;
  sqlite: SqliteCopyOptions;
  /**
   * No server runs: without `sqlite3` a database and its sidecars are copied raw. Asked at the copy itself: a
   * snapshot that waited its turn may meet a server launched meanwhile.
   */
  quiet: boolean | (() => boolean);
  sources: { files: string[]; skipped: Skipped };
}): Promise<{ files: BackupFile[]; skipped: Skipped; bytes: number }> {
  const out = { files: [] as BackupFile[], skipped: opts.sources.skipped, bytes: 0 };
  const sources = opts.sources.files;
  const copy = async (rel: string, how: (source: string, target: string) => Promise<unknown>, sqlite: boolean) => {
    const target = join(opts.stagingDir, rel);
    await makeDir(dirname(target));
    await how(join(opts.instanceDir, rel), target);
    const { bytes, sha256 } = await hashFile(target);
    out.files.push({ path: toPosix(rel), bytes, sha256, ...(sqlite ? { sqlite: true } : {}) });
    out.bytes += bytes;
  };
  const databases: string[] = [];
  // In data/, which the server writes: a named pipe there is refused, never waited on.
  for (const rel of sources)
    if ((await readRegularHead(join(opts.instanceDir, rel), SQLITE_MAGIC.length)).equals(SQLITE_MAGIC))
      databases.push(rel);
  const sidecars = new Set(databases.flatMap((db) => SQLITE_SIDECARS.map((s) => db + s)));
  // Databases first: whether their sidecars go along depends on how they were copied (raw: they go along).
  let raw = false;
  for (const rel of databases)
    await copy(
      rel,
      (source, target) =>
        copySqliteDatabase(source, target, opts.sqlite).catch(async (err) => {
          const missing = err instanceof Error && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
          if (!(missing && (typeof opts.quiet === 'function' ? opts.quiet() : opts.quiet))) throw err;
          await copyFile(source, target);
          raw = true;
        }),
      true,
    );
  for (const rel of sources)
    if (!databases.includes(rel) && (raw || !sidecars.has(rel))) await copy(rel, copyFile, false);
  out.files.sort((a, b) => (a.path < b.path ? -1 : 1));
  return out;
}

/**
 * `.backup` takes the locks and copies a consistent state while the server writes; a raw copy can be torn. The
 * target goes into the dot command quoted: one with a quote is refused (the daemon names its targets).
 */
function copySqliteDatabase(source: string, target: string, opts: SqliteCopyOptions): Promise<void> {
  if (target.includes("'") || target.includes('\n'))
    return Promise.reject(new Error(`cannot back up to ${JSON.stringify(target)}: the path holds a quote`));
  return new Promise((resolve, reject) => {
    execFile(
      opts.program,
      // -bail: stop at the first error; the database is opened read-only, so a backup never changes it.
      ['-bail', '-readonly', source, `.backup '${target}'`],
      { timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024, windowsHide: true },
      (err, _stdout, stderr) => {
        if (!err) return resolve();
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT')
          return reject(
            new Error(
              `cannot back up the SQLite database ${source}: the program "${opts.program}" is not installed ` +
                '(Debian: apt-get install sqlite3; or set Backups.Sqlite3Path)',
              { cause: err },
            ),
          );
        const why = (err as { killed?: boolean }).killed
          ? `it took longer than ${opts.timeoutMs / 1000} s (the database stayed locked by a writer?)`
          : stderr.trim() || describeError(err);
        reject(new Error(`cannot back up the SQLite database ${source}: ${why}`, { cause: err }));
      },
    );
  });
}

/** The regular files under SNAPSHOT_PATHS; links and the like are noted, never followed. */
export async function listSources(instanceDir: string): Promise<{ files: string[]; bytes: number; skipped: Skipped }> {
  const out = { files: [] as string[], bytes: 0, skipped: [] as Skipped };
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
