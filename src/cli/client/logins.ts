import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { makeDir } from '../../make-dir.ts';
import { writeFileAtomic } from '../../store/atomic-file.ts';
import { type AdminLogin, basic } from './http.ts';

/** What `watchdog login` keeps for one daemon: the user, and the API key the daemon made for it (never a password). */
export interface KeptLogin {
  user: string;
  key: string;
  expires: string;
}

/** Per daemon address, the user and its key; readable by its owner alone (0600 in 0700), as ssh and docker keep theirs. */
function loginsFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'watchdog', 'logins.json');
}

/** Older versions kept the password itself (`password`); such an entry is still sent, until the next login. */
type Logins = Record<string, Partial<KeptLogin> & { password?: string }>;

async function readLogins(env: NodeJS.ProcessEnv): Promise<Logins> {
  try {
    const parsed = JSON.parse(await readFile(loginsFile(env), 'utf8')) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Logins) : {};
  } catch {
    // None yet, or unreadable: as if never logged in (`watchdog login` writes it anew).
    return {};
  }
}

export async function storedLogin(url: string, env: NodeJS.ProcessEnv): Promise<AdminLogin | undefined> {
  const found = (await readLogins(env))[url];
  if (typeof found?.key === 'string') return { authorization: `Bearer ${found.key}` };
  if (typeof found?.user === 'string' && typeof found.password === 'string')
    return { authorization: basic(found.user, found.password) };
  return undefined;
}

/** Keeps `login` for `url` (undefined: forgets it); the file, and what it held for `url`. */
export async function keepLogin(
  url: string,
  login: KeptLogin | undefined,
  env: NodeJS.ProcessEnv,
): Promise<{ file: string; was: Partial<KeptLogin> | undefined }> {
  const file = loginsFile(env);
  const logins = await readLogins(env);
  const was = logins[url];
  if (login) logins[url] = login;
  else delete logins[url];
  await makeDir(join(file, '..'), 0o700);
  await writeFileAtomic(file, `${JSON.stringify(logins, null, 2)}\n`, { mode: 0o600 });
  return { file, was };
}
