import { can, type Principal, principalName } from './can.ts';
import { ALL_INSTANCES, type Grant, type Permission } from './permissions.ts';
import type { UsersDb } from './users-file.ts';

/** What a user manager asks to do (the HTTP user routes); `grants` are what the new roles would give. */
export type UserChange =
  | { action: 'list' }
  | { action: 'create'; user: string; grants: readonly Grant[] }
  | { action: 'set-roles'; user: string; grants: readonly Grant[] }
  | { action: 'remove'; user: string };

/** The account in the users file whose rights the principal holds: a user's own, a key's user, a proxy's user. */
function accountOf(p: Principal): string | undefined {
  if (p.kind === 'user') return p.user.name;
  if (p.kind === 'key') return p.key.user;
  if (p.kind === 'sso') return p.name;
  return undefined;
}

const where = (instance: string) => (instance === ALL_INSTANCES ? 'every instance (*)' : instance);

/**
 * THE grant rule for managing users over HTTP, asked once per request beside can(); undefined when allowed. With no
 * accounts (`actor` undefined) everything is, as for every right. Otherwise the actor needs `users.manage` on some
 * instance (or `*`), and:
 * - it may not change its own account's roles, nor remove it (a key or proxy user: the account it acts for);
 * - it may change or remove another user only if it holds every grant that user holds, so no one demotes a superior;
 * - it may grant only what it holds, each right where it manages users: a grant on `*` needs the actor's own grant
 *   on `*`, never merely one on each instance that exists now (a new instance would widen it).
 * can() decides each "holds", so a key holds only what both it and its user hold.
 */
export function mayManage(
  actor: Principal | undefined,
  change: UserChange,
  db: UsersDb,
  instances: readonly string[],
  now: number = Date.now(),
): { permission: Permission; error: string } | undefined {
  if (actor === undefined) return undefined;
  const name = principalName(actor);
  const holds = (permission: Permission, instance: string) => can(actor, permission, instance, db, now);
  /** The right of `g` the actor lacks: the permission itself, or managing users where it is given. */
  const lacking = (g: Grant): Permission | undefined => {
    if (!holds(g.permission, g.instance)) return g.permission;
    return holds('users.manage', g.instance) ? undefined : 'users.manage';
  };
  const given = change.action === 'create' || change.action === 'set-roles' ? change.grants : [];
  const scopes = new Set([ALL_INSTANCES, ...instances, ...given.map((g) => g.instance)]);
  if (![...scopes].some((i) => holds('users.manage', i)))
    return { permission: 'users.manage', error: `${name} may not users.manage` };
  if (change.action === 'list') return undefined;

  if (accountOf(actor) === change.user)
    return {
      permission: 'users.manage',
      error: `${name} may not change its own roles or remove itself; another user with users.manage must`,
    };
  // First what the user holds (no one demotes a superior), then what the change gives.
  const held = (db.users.get(change.user)?.grants ?? []).map((g) => [g, `change ${change.user}, who holds`] as const);
  for (const [g, verb] of [...held, ...given.map((g) => [g, 'grant'] as const)]) {
    const missing = lacking(g);
    const error = `${name} may not ${verb} ${g.permission} on ${where(g.instance)}: ${name} lacks ${missing} there`;
    if (missing) return { permission: missing, error };
  }
  return undefined;
}
