import { formatBytes } from '../../store/disk-space.ts';
import type { BackupListing } from '../../supervisor/status.ts';
import { instanceKeyArg, parseCommandArgs, positiveNumber } from '../client/args.ts';
import { fetchBackups, instancePath, request } from '../client/http.ts';
import { atInstance, TARGET_FLAGS, TARGET_USAGE, targetOf } from '../client/target.ts';
import type { Command, CommandOptions } from '../registry.ts';

export const backupsUsage = `usage: watchdog backups <key> [--json] [--url URL] [--token T] [--config F]
  Lists the snapshots of the instance's data, newest first: when, why (before-update, manual, scheduled,
  before-restore), the build it was taken on, and its size.
  --json        the list as JSON
${TARGET_USAGE}`;

export const backupUsage = `usage: watchdog backup <key> [--timeout S] [--json] [--url URL] [--token T] [--config F]
  Takes a snapshot of the instance's data/ and config.toml now, running server or not (SQLite databases are copied
  with SQLite's online backup), applies Retention.Backups and starts Backups.AfterCommand; prints what it took.
  --timeout S   how long to wait for it (default 600)
  --json        the snapshot as JSON
${TARGET_USAGE}`;

export const backupsOptions = { ...TARGET_FLAGS, json: { type: 'boolean' } } as const satisfies CommandOptions;
export const backupOptions = { ...backupsOptions, timeout: { type: 'string' } } as const satisfies CommandOptions;

/** One line per snapshot: `20261128T031500Z-rev  2026-11-28T03:15:00Z  before-update  rev → rev2  12.3 MB`. */
export function backupLine(b: BackupListing): string {
  const build = b.revisionAfter ? `${b.revision ?? '-'} → ${b.revisionAfter}` : (b.revision ?? '-');
  const size = `${formatBytes(b.archiveBytes)} (${b.files} files)`;
  return [b.id, b.takenAt, b.kind.padEnd(14), build, size, ...(b.forRollback ? ['← rollback --with-data'] : [])].join(
    '  ',
  );
}

/** `watchdog backups <key>`: GET /instances/<key>/backups. */
export const backups: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, backupsOptions, backupsUsage);
  const [key] = instanceKeyArg(positionals, backupsUsage);
  const list = await atInstance(targetOf('backups', values), key, (ep) => fetchBackups(ep));
  if (values.json) process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
  else if (list.length === 0) process.stdout.write(`no backups of ${key} yet\n`);
  else process.stdout.write(`${list.map(backupLine).join('\n')}\n`);
  return 0;
};

/** `watchdog backup <key>`: POST /instances/<key>/backups, and what was taken. */
export const backup: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, backupOptions, backupUsage);
  const [key] = instanceKeyArg(positionals, backupUsage);
  const seconds = positiveNumber('--timeout', values.timeout, backupUsage) ?? 600;
  const taken = await atInstance(targetOf('backup', values), key, (ep) =>
    request<BackupListing>(instancePath(ep, 'backups'), ep, 'the backup', {
      method: 'POST',
      authorization: ep.authorization,
      timeoutMs: seconds * 1000,
    }),
  );
  if (values.json) process.stdout.write(`${JSON.stringify(taken, null, 2)}\n`);
  else process.stdout.write(`backup of ${key} taken: ${backupLine(taken)}\n`);
  return 0;
};
