import { basename, dirname } from 'node:path';
import { hasAccounts, readUsersFile, type UsersDb } from '../auth/users-file.ts';
import type { Logger } from '../log.ts';
import { reloadOnChange } from './reload.ts';

/**
 * Keeps the users file in force, read again on SIGHUP and when it changes. A broken file, or one removed while it held
 * accounts, leaves the last good one in force: a typo must not lock every user out.
 */
export function startUsersReload(opts: { file: string; initial: UsersDb; log: Logger }) {
  const { file, log } = opts;
  let db = opts.initial;
  let chain = Promise.resolve();
  const once = async (trigger: string) => {
    const read = await readUsersFile(file);
    if (!read.ok) {
      log.error(`users file reload (${trigger}) refused; the last good one stays in force`, { file });
      for (const p of read.problems) log.error(`  ${p}`);
      return;
    }
    if (read.missing && hasAccounts(db)) {
      log.error(`the users file ${file} is gone; its last good version stays in force (empty it to remove every user)`);
      return;
    }
    for (const w of read.warnings) log.warn(w);
    db = read.db;
    log.info(`users file reloaded (${trigger})`, { users: db.users.size, keys: db.keys.size });
  };
  const reload = (trigger: string): Promise<void> => {
    chain = chain.then(() => once(trigger)).catch(() => undefined);
    return chain;
  };
  const stop = reloadOnChange({
    folder: dirname(file),
    matches: (name) => name === basename(file),
    what: 'users file',
    reload: (trigger) => void reload(trigger),
    log,
  });
  return {
    current: (): UsersDb => db,
    reload,
    stop,
  };
}
