import { stringify } from 'yaml';
import { ConfigError, describeError } from '../errors.ts';
import { writeFileAtomic } from '../store/atomic-file.ts';
import { type NewApiKey, newApiKey } from './api-keys.ts';
import { parseUsers, readUsersFile, type UsersDoc } from './users-file.ts';

/** The users file as it stands, for an edit; a ConfigError naming every problem when it is not valid now. */
export async function readForEdit(file: string): Promise<UsersDoc> {
  const read = await readUsersFile(file);
  if (!read.ok) throw new ConfigError([...read.problems, `fix ${file} first; it was not changed`]);
  // A deep copy, so an edit never touches what parseUsers returned.
  return structuredClone(read.doc);
}

const HEADER = `# Accounts and API keys of the watchdog (README, "Users and rights"). Edit with \`watchdog user\` and
# \`watchdog key\`; passwords and keys are stored hashed, never in plain text. The daemon reloads this file on change.
`;

/** `doc` as the file's text, once it passed the daemon's validation; a ConfigError naming each problem if not. */
export function checkedText(file: string, doc: UsersDoc): string {
  const text = HEADER + stringify(doc, { lineWidth: 0 });
  const check = parseUsers(text, file);
  if (!check.ok) throw new ConfigError(check.problems);
  return text;
}

/**
 * Validates `doc` as the daemon would and writes it atomically with mode 0600 (temporary file, rename): the daemon
 * reloading at any moment reads the old file or the new one, never half of one.
 */
export async function writeUsers(file: string, doc: UsersDoc): Promise<void> {
  const text = checkedText(file, doc);
  try {
    await writeFileAtomic(file, text, { mode: 0o600 });
  } catch (err) {
    const why = `could not write the users file ${file} (${describeError(err)})`;
    throw new Error(`${why}; check that its folder is writable`, { cause: err });
  }
}

/**
 * Adds a new API key of `user` to `doc` (`watchdog key create`, and a key made at `watchdog login`): its own
 * `permissions` (undefined: all of its user's) and an expiry `days` from `now` (undefined: never).
 */
export function addApiKey(
  doc: UsersDoc,
  user: string,
  opts: { permissions?: string[]; days?: number },
  now = Date.now(),
): NewApiKey & { expires?: string } {
  const made = newApiKey();
  const expires = opts.days === undefined ? undefined : new Date(now + opts.days * 86_400_000).toISOString();
  doc.Keys ??= {};
  doc.Keys[made.id] = {
    User: user,
    Hash: made.hash,
    ...(opts.permissions === undefined ? {} : { Permissions: opts.permissions }),
    ...(expires === undefined ? {} : { Expires: expires }),
    Created: new Date(now).toISOString(),
  };
  return expires === undefined ? made : { ...made, expires };
}
