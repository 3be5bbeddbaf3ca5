import { execFile } from 'node:child_process';
import { describeError } from '../errors.ts';
import { readRegularHead } from '../regular-file.ts';

/* `.backup` takes the locks and copies a consistent state while the server writes; a raw copy can be torn. */

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/** What they hold, the online backup holds. */
export const SQLITE_SIDECARS = ['-wal', '-shm', '-journal'] as const;

export async function isSqliteDatabase(path: string): Promise<boolean> {
  // In data/, which the server writes: a named pipe there is refused, never waited on.
  return (await readRegularHead(path, MAGIC.length)).equals(MAGIC);
}

export interface SqliteCopyOptions {
  program: string;
  timeoutMs: number;
}

/** The target goes into the dot command quoted: one with a quote is refused (the daemon names its targets). */
export function copySqliteDatabase(source: string, target: string, opts: SqliteCopyOptions): Promise<void> {
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
