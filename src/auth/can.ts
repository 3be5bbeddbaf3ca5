import { monotonicMs } from '../clock.ts';
import { sameSecret } from '../kit/api-watchdog.ts';
import { apiKeyId, hashApiKey } from './api-keys.ts';
import { verifyPassword } from './password.ts';
import { grants, type Permission } from './permissions.ts';
import { sha256 } from './sessions.ts';
import type { ApiKeyEntry, UserAccount, UsersDb } from './users-file.ts';

/** Who a request speaks for, once its credentials were checked. */
export type Principal =
  | { kind: 'user'; user: UserAccount }
  | { kind: 'key'; key: ApiKeyEntry }
  /** An instance's `ApiToken`: everything but `users.manage`, on that instance only. */
  | { kind: 'instance-token'; instance: string }
  /** The `Admin` login of appsettings.yml: admin on all instances. */
  | { kind: 'admin'; name: string }
  /** A user a trusted proxy or provider vouched for: its groups' rights (`Groups:`), and its own account's. */
  | { kind: 'sso'; name: string; groups: readonly string[] };

/** The principal's name in the audit log: the user, `key:<id>`, the instance key, or the Admin user. */
export const principalName = (p: Principal): string =>
  p.kind === 'user'
    ? p.user.name
    : p.kind === 'key'
      ? `key:${p.key.id}`
      : p.kind === 'instance-token'
        ? p.instance
        : p.name;

/**
 * THE check every route asks: whether `principal` may use `permission` on `instance`. A key holds what both it and
 * its user hold now (taking a right from the user takes it from the key), and nothing once expired or orphaned.
 */
export function can(
  principal: Principal,
  permission: Permission,
  instance: string,
  db: UsersDb,
  now: number = Date.now(),
): boolean {
  switch (principal.kind) {
    case 'admin':
      return true;
    case 'instance-token':
      return principal.instance === instance && permission !== 'users.manage';
    case 'user': {
      // The account as the file now says, not as it was when the request's credentials were read.
      const user = db.users.get(principal.user.name);
      return user !== undefined && grants(user.grants, permission, instance);
    }
    case 'sso': {
      const own = db.users.get(principal.name)?.grants ?? [];
      return (
        grants(own, permission, instance) ||
        principal.groups.some((g) => grants(db.groups.get(g) ?? [], permission, instance))
      );
    }
    case 'key': {
      const key = principal.key;
      if (key.expiresAt !== undefined && now >= key.expiresAt) return false;
      const user = db.users.get(key.user);
      if (!user || !grants(user.grants, permission, instance)) return false;
      return key.grants === undefined || grants(key.grants, permission, instance);
    }
  }
}

/** The key a Bearer token names, if it is one of ours, matches its stored hash, is in force and has its user. */
export function findApiKey(token: string, db: UsersDb, now: number = Date.now()): ApiKeyEntry | undefined {
  const id = apiKeyId(token);
  const entry = id === undefined ? undefined : db.keys.get(id);
  // Hashed either way, so an unknown id costs what a known one does.
  const matches = sameSecret(hashApiKey(token), entry?.hash ?? '');
  if (!entry || !matches) return undefined;
  if (entry.expiresAt !== undefined && now >= entry.expiresAt) return undefined;
  if (!db.users.has(entry.user)) return undefined;
  return entry;
}

/** scrypt checks running at once: a flood of wrong passwords gets this many threadpool threads, never all of them. */
const MAX_CHECKS = 2;
let checking = 0;
/** Passwords checked lately, by stored hash and password digest → until when (monotonic ms): one scrypt a minute. */
const verified = new Map<string, number>();
const VERIFIED_MS = 60_000;
const VERIFIED_MAX = 1000;

/**
 * The user named, if the password matches; `busy` while MAX_CHECKS checks run (the caller answers 503). An unknown
 * name costs a hash too, so it cannot be told apart by time. A match is remembered for a minute under the stored
 * hash (a changed password is a new hash), so a client sending its password with every request pays scrypt once.
 */
export async function findUser(name: string, password: string, db: UsersDb): Promise<UserAccount | 'busy' | undefined> {
  const user = db.users.get(name);
  const stored = user?.passwordHash ?? DUMMY_HASH;
  const memo = `${stored}\0${sha256(password)}`;
  const until = verified.get(memo);
  if (user && until !== undefined && until > monotonicMs()) return user;
  if (checking >= MAX_CHECKS) return 'busy';
  checking += 1;
  try {
    if (!(await verifyPassword(password, stored)) || !user) return undefined;
  } finally {
    checking -= 1;
  }
  if (verified.size >= VERIFIED_MAX) verified.clear();
  verified.set(memo, monotonicMs() + VERIFIED_MS);
  return user;
}

/** A valid hash of nothing anyone knows, checked against for unknown names. */
const DUMMY_HASH = 'scrypt$N=16384,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
