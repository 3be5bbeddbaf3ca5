import { relative } from 'node:path';
import { loadConfig } from '../../config/load.ts';
import type { ResolvedInstance } from '../../config/resolved.ts';
import { type FolderLock, FolderLockedError, lockFolders, ownedFolders } from '../../daemon/folder-lock.ts';
import { ConfigError, describeError } from '../../errors.ts';
import { ownStartTime } from '../../import/data-db-import.ts';
import { describeSystemdUnit, type InstanceImport, importedData, inspectRow } from '../../import/instance-import.ts';
import { makeDir } from '../../make-dir.ts';
import { DATA_FILE, instanceDataKind, writeInstanceData } from '../../store/instance-data.ts';
import { readWatchdogDb, type WatchdogDb, watchdogDbExists } from '../../store/watchdog-db.ts';
import { parseCommandArgs } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import type { CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog import [--config FILE] [--dry-run] [--force]
  Imports the real watchdog's data file (Data.File) for every instance without a data.json of ours; run it with the
  daemon stopped.
  --config FILE   the main configuration file (default: ./appsettings.yml)
  --dry-run       print what would be imported; write nothing
  --force         replace data.json files that exist`;

export const options = {
  config: { type: 'string' },
  'dry-run': { type: 'boolean' },
  force: { type: 'boolean' },
} as const satisfies CommandOptions;

/** What becomes of the persisted server, in the future tense of a command run before the daemon starts. */
function serverLine(found: InstanceImport, dryRun: boolean): string {
  const pid = found.persistedPid;
  const will = dryRun ? 'would be' : 'will be';
  switch (found.server) {
    case 'adopt':
      return `pid ${pid} running, ${will} adopted at the daemon's next start`;
    case 'shut-down':
      return `pid ${pid} running, ${will} shut down gracefully at the daemon's next start (Process.PersistServers is off)`;
    case 'none':
      return pid === null ? 'no server pid' : `pid ${pid} not adopted: ${found.reason ?? 'unknown'}`;
  }
}

async function importOne(
  instance: ResolvedInstance,
  db: WatchdogDb,
  opts: { dryRun: boolean; force: boolean; persistServers: boolean; before: string; cwd: string },
): Promise<{ lines: string[]; failed: boolean }> {
  const row = db.rows.get(instance.key);
  if (!row) return { lines: [`${instance.key}: not in the data file`], failed: false };
  if (!opts.force && (await instanceDataKind(instance.dir)) === 'ours') {
    const where = `${relative(opts.cwd, instance.dir) || '.'}/${DATA_FILE}`;
    return { lines: [`${instance.key}: skipped, ${where} exists (--force replaces it)`], failed: false };
  }
  const found = await inspectRow(row, instance, { persistServers: opts.persistServers, before: opts.before });
  const lines = [`${instance.key}: revision ${found.revision ?? '(none)'}; ${serverLine(found, opts.dryRun)}`];
  if (found.systemdUnit !== null) lines.push(`  ${describeSystemdUnit(found.systemdUnit)}`);
  if (opts.dryRun) return { lines, failed: false };
  try {
    await makeDir(instance.dir);
    await writeInstanceData(instance.dir, importedData(found, instance.settings.UpdateType ?? null));
    return { lines, failed: false };
  } catch (err) {
    return { lines: [...lines, `  failed: ${describeError(err)}`], failed: true };
  }
}

/** `watchdog import`: as the daemon does at start. Exit 1 when data.db cannot be read or a write failed. */
export async function run(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, options, usage, 0);
  const cwd = process.cwd();
  const loaded = await loadConfig({ file: values.config, cwd, env: process.env });
  if (!loaded.ok) throw new ConfigError(loaded.problems);
  for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
  const { config } = loaded;
  const file = config.dataFile;
  if (!(await watchdogDbExists(file)))
    throw new ClientError(`no data file at ${file}; set Data.File to the real watchdog's data.db`);
  const db = await readWatchdogDb(file);
  if (db.unfinished.length > 0) {
    process.stderr.write(
      `warning: ${db.unfinished.join(' and ')} beside the data file: the real watchdog is running or did not stop cleanly, ` +
        'so this may miss its last write; stop it cleanly and run the import again\n',
    );
  }
  // data.json is the daemon's to write while it runs; holding its lock also keeps a daemon from starting meanwhile.
  let lock: FolderLock | null = null;
  if (values['dry-run'] !== true) {
    try {
      lock = await lockFolders(ownedFolders(config), { command: 'import' });
    } catch (err) {
      if (!(err instanceof FolderLockedError)) throw err;
      throw new ClientError(`${err.message}; nothing imported`, 1, { cause: err });
    }
  }
  try {
    const opts = {
      dryRun: values['dry-run'] === true,
      force: values.force === true,
      persistServers: config.persistServers,
      before: await ownStartTime(),
      cwd,
    };
    process.stdout.write(`data file: ${file} (${db.rows.size} ${db.rows.size === 1 ? 'entry' : 'entries'})\n`);
    let failed = false;
    for (const instance of config.instances) {
      const outcome = await importOne(instance, db, opts);
      failed ||= outcome.failed;
      for (const line of outcome.lines) process.stdout.write(`${line}\n`);
    }
    const unknown = [...db.rows.keys()].filter((key) => !config.instances.some((i) => i.key === key));
    if (unknown.length > 0) process.stdout.write(`not configured here, not imported: ${unknown.join(', ')}\n`);
    if (opts.dryRun) process.stdout.write('dry run: nothing written\n');
    return failed ? 1 : 0;
  } finally {
    await lock?.release();
  }
}
