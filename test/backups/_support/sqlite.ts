import { type ChildProcess, execFileSync, spawn } from 'node:child_process';

/** Whether the `sqlite3` program is here; the suites that need it skip with this reason when it is not. */
export function sqliteUnavailable(): string | null {
  try {
    execFileSync('sqlite3', ['-version'], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `the sqlite3 program is not installed (${(err as Error).message.split('\n')[0]})`;
  }
}

/** Runs SQL against a database with the `sqlite3` program and returns its output, trimmed. */
export const sql = (db: string, statement: string): string =>
  execFileSync('sqlite3', ['-bail', db, statement], { encoding: 'utf8', timeout: 30_000 }).trim();

/**
 * A real SQLite writer: one `sqlite3` process in WAL mode inserting a row every few milliseconds (each its own
 * transaction) until stopped or `maxRows` is reached, so a backup meets a database that is being written.
 */
export interface Writer {
  child: ChildProcess;
  stop(): Promise<void>;
}

export function startWriter(db: string, opts: { maxRows: number; everyMs: number }): Writer {
  sql(db, 'PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS rows(n INTEGER PRIMARY KEY, payload TEXT);');
  const child = spawn('sqlite3', ['-bail', db], { stdio: ['pipe', 'ignore', 'inherit'] });
  let n = 0;
  const timer = setInterval(() => {
    if (n >= opts.maxRows || !child.stdin?.writable) return clearInterval(timer);
    n++;
    child.stdin.write(`INSERT INTO rows(payload) VALUES ('${'x'.repeat(200)}-${n}');\n`);
  }, opts.everyMs);
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        clearInterval(timer);
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin?.end('.quit\n');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}
