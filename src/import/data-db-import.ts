import type { ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { readProcessStartTime } from '../process/proc-info.ts';
import { instanceDataKind, writeInstanceData } from '../store/instance-data.ts';
import { readWatchdogDb, type WatchdogDb, watchdogDbExists } from '../store/watchdog-db.ts';
import {
  describeServer,
  describeSystemdUnit,
  type InstanceImport,
  importedData,
  inspectRow,
} from './instance-import.ts';

/** Servers the old watchdog left started before this process; without /proc, '0' fails every pid's check. */
export const ownStartTime = async (): Promise<string> => (await readProcessStartTime(process.pid)) ?? '0';

/** data.db, or null (logged) when it is missing, unreadable or damaged; a journal or WAL beside it is warned about. */
async function openWatchdogDb(file: string, log: Logger): Promise<WatchdogDb | null> {
  if (!(await watchdogDbExists(file))) return null;
  const db = await readWatchdogDb(file).catch((err: unknown) => {
    log.warn("could not import from the real watchdog's data file; starting without it", {
      file,
      problem: describeError(err),
    });
    return null;
  });
  if (db?.unfinished.length) {
    log.warn(
      "the real watchdog's data file has an unfinished write beside it (it is running or did not stop cleanly); " +
        'the import may miss its last write: stop the real watchdog cleanly before starting this one',
      { file, beside: db.unfinished },
    );
  }
  return db;
}

/** At daemon start: data.db is read (and SQLite loaded) only when an instance needs it and it exists. */
export function createDataDbImport(opts: { file: string; persistServers: () => boolean; log: Logger }) {
  let opened: Promise<[WatchdogDb | null, string]> | undefined;
  return {
    /** Writes data.json from data.db (never written) for an instance with none of ours yet; never throws. */
    async importInto(instance: ResolvedInstance, log: Logger): Promise<InstanceImport | null> {
      try {
        if ((await instanceDataKind(instance.dir)) === 'ours') return null;
        opened ??= Promise.all([openWatchdogDb(opts.file, opts.log), ownStartTime()]);
        const [db, before] = await opened;
        if (!db) return null;
        const row = db.rows.get(instance.key);
        if (!row) {
          log.info("the real watchdog's data file has no entry for this instance; nothing to import", {
            file: db.file,
          });
          return null;
        }
        const found = await inspectRow(row, instance, { persistServers: opts.persistServers(), before });
        await writeInstanceData(instance.dir, importedData(found, instance.settings.UpdateType ?? null));
        const fields = { file: db.file, revision: found.revision, pid: found.persistedPid, server: found.server };
        const msg = `imported from the real watchdog's data file: revision ${found.revision ?? '(none)'}; ${describeServer(found)}`;
        if (found.server === 'shut-down') log.warn(msg, fields);
        else log.info(msg, fields);
        if (found.systemdUnit !== null) log.warn(describeSystemdUnit(found.systemdUnit), { unit: found.systemdUnit });
        return found;
      } catch (err) {
        log.warn("could not import from the real watchdog's data file; starting without it", {
          file: opts.file,
          error: describeError(err),
        });
        return null;
      }
    },
  };
}
