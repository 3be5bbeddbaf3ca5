import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../store/atomic-file.ts';

/**
 * Credentials for the admin routes (`GET /api/instances`, any instance's log): `Admin.Username`/`Password` of the
 * daemon, or a user's from its users file.
 */
export interface AdminLogin {
  username: string;
  password: string;
}

/**
 * `watchdog login`'s store: per daemon address, the user name and password it checked, in
 * `$XDG_CONFIG_HOME/watchdog/logins.json` (else `~/.config/…`), readable by its owner alone (0600, in a 0700
 * folder), as ssh and docker keep theirs. The CLI sends them where no --token or WATCHDOG_TOKEN is given.
 */
export function loginsFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'watchdog', 'logins.json');
}

type Logins = Record<string, { user: string; password: string }>;

async function readLogins(env: NodeJS.ProcessEnv): Promise<Logins> {
  try {
    const parsed = JSON.parse(await readFile(loginsFile(env), 'utf8')) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Logins) : {};
  } catch {
    // None yet, or unreadable: as if never logged in (`watchdog login` writes it anew).
    return {};
  }
}

/** The login kept for the daemon at `url`, if any. */
export async function storedLogin(url: string, env: NodeJS.ProcessEnv): Promise<AdminLogin | undefined> {
  const found = (await readLogins(env))[url];
  return typeof found?.user === 'string' && typeof found.password === 'string'
    ? { username: found.user, password: found.password }
    : undefined;
}

/** Keeps `login` for `url` (undefined: forgets it); the other daemons' logins stay. */
export async function keepLogin(url: string, login: AdminLogin | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  const file = loginsFile(env);
  const logins = await readLogins(env);
  if (login) logins[url] = { user: login.username, password: login.password };
  else delete logins[url];
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, `${JSON.stringify(logins, null, 2)}\n`, { mode: 0o600 });
  return file;
}
