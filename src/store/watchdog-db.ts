import { readFile, stat } from 'node:fs/promises';
import type { Database, SqlValue } from 'sql.js';
import { describeError } from '../errors.ts';

/** One row of the real watchdog's `ServerInstance` table; columns an older schema lacks read as null. */
export interface WatchdogDbRow {
  key: string;
  revision: string | null;
  /** The check-in secret of the server it launched last. */
  persistedToken: string | null;
  /** Only with `Process.PersistServers: true` and the Basic process manager. */
  persistedPid: number | null;
  /** With `Process.Mode: Systemd`. */
  persistedSystemdUnit: string | null;
}

export interface WatchdogDb {
  file: string;
  rows: Map<string, WatchdogDbRow>;
  /** A `-journal` or `-wal` beside it: the real watchdog runs or did not stop cleanly. */
  unfinished: string[];
}

export class WatchdogDbError extends Error {
  override name = 'WatchdogDbError';
}

const SQLITE_MAGIC = 'SQLite format 3\0';
const COLUMNS = ['Key', 'Revision', 'PersistedToken', 'PersistedPid', 'PersistedSystemdUnit'] as const;

/** Cheap, so start-up loads SQLite only when there is something to import. */
export const watchdogDbExists = async (file: string) => (await stat(file).catch(() => null))?.isFile() ?? false;

/**
 * Reads the real watchdog's `Data.File` as an in-memory copy, of any schema it has had (0002–0004 lack the
 * persistence columns); WatchdogDbError when it is missing, not SQLite, damaged or without `ServerInstance`.
 */
export async function readWatchdogDb(file: string): Promise<WatchdogDb> {
  const bytes = await readFile(file).catch((err: unknown) => {
    throw new WatchdogDbError(`could not read ${file} (${describeError(err)}); check Data.File and its permissions`, {
      cause: err,
    });
  });
  const unfinished: string[] = [];
  for (const suffix of ['-journal', '-wal']) {
    const s = await stat(file + suffix).catch(() => null);
    if (s?.isFile() && s.size > 0) unfinished.push(file + suffix);
  }
  // An empty file is what SQLite creates before the first write: a database with no tables.
  if (bytes.length > 0 && bytes.subarray(0, SQLITE_MAGIC.length).toString('latin1') !== SQLITE_MAGIC) {
    throw new WatchdogDbError(
      `${file} is not an SQLite database (it does not start with "SQLite format 3"); check Data.File`,
    );
  }
  // Loaded here, not at the top: only a daemon that finds a data.db pays for the WebAssembly module.
  const { default: initSqlJs } = await import('sql.js');
  const db = await initSqlJs()
    .then((SQL) => new SQL.Database(bytes))
    .catch((err: unknown) => {
      throw new WatchdogDbError(`could not open ${file} as SQLite (${describeError(err)})`, { cause: err });
    });
  try {
    return { file, rows: readRows(db, file), unfinished };
  } finally {
    db.close();
  }
}

function readRows(db: Database, file: string): Map<string, WatchdogDbRow> {
  const damaged = (err: unknown) =>
    new WatchdogDbError(`${file} is damaged (${describeError(err)}); restore it from a backup or start without it`, {
      cause: err,
    });
  let present: Set<string>;
  try {
    const check = db.exec('PRAGMA integrity_check');
    const verdict = check[0]?.values.map((v) => String(v[0])) ?? [];
    if (verdict.length !== 1 || verdict[0] !== 'ok') {
      throw new Error(`integrity check: ${verdict.slice(0, 3).join('; ')}`);
    }
    present = new Set((db.exec('PRAGMA table_info(ServerInstance)')[0]?.values ?? []).map((v) => String(v[1])));
  } catch (err) {
    throw damaged(err);
  }
  if (!present.has('Key')) {
    throw new WatchdogDbError(
      `${file} has no ServerInstance table; it is not the real watchdog's data file, or it was never started (check Data.File)`,
    );
  }
  const select = COLUMNS.map((c) => (present.has(c) ? c : `NULL AS ${c}`)).join(', ');
  const rows = new Map<string, WatchdogDbRow>();
  let result: SqlValue[][];
  try {
    result = db.exec(`SELECT ${select} FROM ServerInstance`)[0]?.values ?? [];
  } catch (err) {
    throw damaged(err);
  }
  for (const [key, revision, token, pid, unit] of result) {
    if (typeof key !== 'string') continue;
    rows.set(key, {
      key,
      revision: text(revision),
      persistedToken: text(token),
      persistedPid: typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : null,
      persistedSystemdUnit: text(unit),
    });
  }
  return rows;
}

/** SQLite is loosely typed: a TEXT column may hold a number. */
function text(value: SqlValue | undefined): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return null;
}
