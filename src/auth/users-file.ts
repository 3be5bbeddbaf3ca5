import { problemLine } from '../config/issues.ts';
import { parseYaml } from '../config/layers.ts';
import { isMap } from '../config/merge.ts';
import { INSTANCE_KEY } from '../config/schema.ts';
import { describeError } from '../errors.ts';
import { readRegularFile } from '../regular-file.ts';
import { isApiKeyHash } from './api-keys.ts';
import { isPasswordHash } from './password.ts';
import { BUILTIN_ROLES, type Grant, isPermission, PERMISSIONS, type Permission, splitScoped } from './permissions.ts';
import { isTotpSecret } from './totp.ts';

/** The users file as written: what the CLI edits and serialises back. */
export interface UsersDoc {
  Roles?: Record<string, string[]>;
  Users?: Record<string, { Password: string; Roles?: string[]; Totp?: string }>;
  Keys?: Record<string, { User: string; Hash: string; Permissions?: string[]; Expires?: string; Created?: string }>;
  Groups?: Record<string, string[]>;
}

export interface UserAccount {
  name: string;
  passwordHash: string;
  grants: Grant[];
  /** The TOTP secret (base32) when the user logs in with a one-time code too (`watchdog user totp`). */
  totp?: string;
}

export interface ApiKeyEntry {
  id: string;
  user: string;
  hash: string;
  /** Its own rights; undefined → whatever its user holds. */
  grants: Grant[] | undefined;
  /** Epoch ms after which it is refused; undefined → never. */
  expiresAt: number | undefined;
}

/** The users file after validation: what can() reads. */
export interface UsersDb {
  users: ReadonlyMap<string, UserAccount>;
  keys: ReadonlyMap<string, ApiKeyEntry>;
  /** Single sign-on: the rights of each group a proxy names for its user (`Groups:`). */
  groups: ReadonlyMap<string, Grant[]>;
}

export const EMPTY_USERS: UsersDb = { users: new Map(), keys: new Map(), groups: new Map() };

/** No users and no keys: the daemon behaves as it did before there were accounts. */
export const hasAccounts = (db: UsersDb): boolean => db.users.size > 0 || db.keys.size > 0 || db.groups.size > 0;

export type UsersParse =
  /** `missing`: there is no users file (no accounts). */
  { ok: true; db: UsersDb; doc: UsersDoc; warnings: string[]; missing?: true } | { ok: false; problems: string[] };

/** User and role names: printable, no `:` (Basic ends the name there) and no spaces. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
const isStringList = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');
const ROLE_NAMES = Object.keys(BUILTIN_ROLES).join(', ');

/** A duplicate key as yaml reports it, with the name that was written twice. */
function nameDuplicates(problems: string[], text: string): string[] {
  const lines = text.split('\n');
  return problems.map((p) => {
    const m = /^(.*?):(\d+):\d+: Map keys must be unique/.exec(p);
    if (!m) return p;
    const key = /^\s*["']?([^"':#]+?)["']?\s*:/.exec(lines[Number(m[2]) - 1] ?? '')?.[1];
    return key === undefined ? p : `${p}: "${key}" is named twice (each user, role and key is named once)`;
  });
}

/**
 * Validates a users file's text. Every problem is reported at once, one line each, naming the file and the user,
 * role or key (`<file>: Users.bob.Roles[1]: expected …, got …`). A key whose user is gone is a warning, not a
 * problem: it is refused at use, and editing a user out must not refuse the whole file.
 */
export function parseUsers(text: string, file: string): UsersParse {
  const parsed = parseYaml(text, file);
  if (!parsed.ok) return { ok: false, problems: nameDuplicates(parsed.problems, text) };
  const data = parsed.data;
  const problems: string[] = [];
  const warnings = [...parsed.warnings];
  const bad = (path: Array<string | number>, expected: string, found: unknown) =>
    problems.push(problemLine(file, path, expected, found));
  /** Each key of `map` not in `keys`, named as a problem. */
  const onlyKeys = (at: Array<string | number>, map: Record<string, unknown>, keys: string[], expected: string) => {
    for (const k of Object.keys(map)) if (!keys.includes(k)) bad([...at, k], expected, map[k]);
  };
  /** The entries of a top-level section, or none (and a problem) when it is not a map. */
  const section = (name: string, expected: string): Array<[string, unknown]> => {
    const value = data[name] ?? {};
    if (isMap(value)) return Object.entries(value);
    bad([name], expected, value);
    return [];
  };
  onlyKeys([], data, ['Roles', 'Users', 'Keys', 'Groups'], 'expected one of Roles, Users, Keys, Groups');

  const roles = new Map<string, readonly Permission[]>(Object.entries(BUILTIN_ROLES));
  for (const [name, list] of section('Roles', 'expected a map of role name to a list of permissions')) {
    if (BUILTIN_ROLES[name]) bad(['Roles', name], `expected a new role name (${ROLE_NAMES} are built in)`, name);
    else if (!NAME.test(name)) bad(['Roles', name], 'expected a role name of letters, digits, "_", "." and "-"', name);
    if (!isStringList(list)) {
      bad(['Roles', name], 'expected a list of permissions', list);
      continue;
    }
    list.forEach((p, i) => {
      if (!isPermission(p)) bad(['Roles', name, i], `expected a permission (${PERMISSIONS.join(', ')})`, p);
    });
    if (!BUILTIN_ROLES[name]) roles.set(name, list.filter(isPermission));
  }

  /** A list of `<kind>` or `<kind>@instance` → the rights it gives; each bad entry named. */
  const grantsOf = (at: Array<string | number>, list: unknown, kind: 'role' | 'permission'): Grant[] => {
    const grantList: Grant[] = [];
    if (!isStringList(list)) bad(at, `expected a list of ${kind} or ${kind}@instance`, list);
    else
      list.forEach((text, i) => {
        const { name, instance } = splitScoped(text);
        const perms = kind === 'role' ? roles.get(name) : isPermission(name) ? [name] : undefined;
        const known = kind === 'role' ? [...roles.keys()] : PERMISSIONS;
        if (!perms) bad([...at, i], `expected a ${kind} (${known.join(', ')})`, text);
        else if (instance !== '*' && !INSTANCE_KEY.test(instance))
          bad([...at, i], 'expected an instance id after "@"', instance);
        else for (const p of perms) grantList.push({ permission: p, instance });
      });
    return grantList;
  };

  const users = new Map<string, UserAccount>();
  for (const [name, entry] of section('Users', 'expected a map of user name to Password and Roles')) {
    const at = ['Users', name];
    if (!NAME.test(name)) bad(at, 'expected a user name of letters, digits, "_", ".", "@" and "-"', name);
    if (!isMap(entry)) {
      bad(at, 'expected a map with Password and Roles', entry);
      continue;
    }
    onlyKeys(at, entry, ['Password', 'Roles', 'Totp'], 'expected Password, Roles or Totp');
    const password = entry.Password;
    if (typeof password !== 'string' || !isPasswordHash(password)) {
      // Never echo what is there: it may be the password itself.
      const found = typeof password === 'string' ? 'a value that is not one (plain text?)' : password;
      bad([...at, 'Password'], 'expected a scrypt hash; set it with `watchdog user passwd`', found);
    }
    const totp = entry.Totp;
    if (totp !== undefined && (typeof totp !== 'string' || !isTotpSecret(totp)))
      // Never echoed either: it is the second factor itself.
      bad([...at, 'Totp'], 'expected a base32 secret as `watchdog user totp` writes it', 'a value that is not one');
    users.set(name, {
      name,
      passwordHash: typeof password === 'string' ? password : '',
      grants: grantsOf([...at, 'Roles'], entry.Roles ?? [], 'role'),
      ...(typeof totp === 'string' ? { totp } : {}),
    });
  }

  const groups = new Map<string, Grant[]>();
  for (const [name, list] of section('Groups', 'expected a map of group name to a list of role or role@instance'))
    groups.set(name, grantsOf(['Groups', name], list, 'role'));

  const keys = new Map<string, ApiKeyEntry>();
  for (const [id, entry] of section('Keys', 'expected a map of key id to User, Hash, Permissions and Expires')) {
    const at = ['Keys', id];
    if (!isMap(entry)) {
      bad(at, 'expected a map with User, Hash, Permissions and Expires', entry);
      continue;
    }
    onlyKeys(
      at,
      entry,
      ['User', 'Hash', 'Permissions', 'Expires', 'Created'],
      'expected User, Hash, Permissions, Expires or Created',
    );
    const user = entry.User;
    if (typeof user !== 'string') bad([...at, 'User'], 'expected the name of the user the key belongs to', user);
    else if (!users.has(user)) warnings.push(`${file}: Keys.${id}: its user ${user} does not exist; it is refused`);
    const hash = entry.Hash;
    if (typeof hash !== 'string' || !isApiKeyHash(hash))
      bad([...at, 'Hash'], 'expected sha256$<hex>, as `watchdog key create` writes it', hash);
    const permissions = entry.Permissions;
    const grantList =
      permissions === undefined ? undefined : grantsOf([...at, 'Permissions'], permissions, 'permission');
    const expires = entry.Expires;
    const expiresAt =
      expires === undefined ? undefined : typeof expires === 'string' ? Date.parse(expires) : Number.NaN;
    if (Number.isNaN(expiresAt)) bad([...at, 'Expires'], 'expected an ISO date and time', expires);
    keys.set(id, { id, user: String(user), hash: String(hash), grants: grantList, expiresAt });
  }

  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, db: { users, keys, groups }, doc: data as UsersDoc, warnings };
}

/** Reads and validates the users file; a missing file is `missing` (no accounts), never a problem. */
export async function readUsersFile(file: string): Promise<UsersParse> {
  let text: string;
  try {
    // A named pipe in its place must not park a threadpool thread for good: it is refused like any bad file.
    text = await readRegularFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return { ok: true, missing: true, db: EMPTY_USERS, doc: {}, warnings: [] };
    return { ok: false, problems: [`${file}: cannot read the users file (${describeError(err)})`] };
  }
  return parseUsers(text, file);
}
