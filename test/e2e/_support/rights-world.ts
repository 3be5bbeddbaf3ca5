import fc from 'fast-check';
import { type NewApiKey, newApiKey } from '../../../src/auth/api-keys.ts';
import { can, type Principal } from '../../../src/auth/can.ts';
import { ALL_INSTANCES, BUILTIN_ROLES, PERMISSIONS } from '../../../src/auth/permissions.ts';
import type { UsersDb } from '../../../src/auth/users-file.ts';
import { basicAuth } from './accounts.ts';
import { ADMIN, INSTANCES, type InstanceKey, PASSWORD, SSO, TOKEN_OF } from './rights.ts';
import type { MatrixRoute } from './rights-routes.ts';

/** Scoped to one instance more often than to all; `@zz` names an instance that does not exist. */
const scope = fc.constantFrom('', '@a', '@b', '@c', '@a', '@b', '@zz');
const roleEntries = (max: number) => fc.array(fc.tuple(fc.nat(7), scope), { maxLength: max });

/** A random users file: roles of its own, users holding roles, groups for single sign-on, keys; and who to try. */
export const worldArbitrary = fc.record({
  roles: fc.array(fc.subarray([...PERMISSIONS], { minLength: 1 }), { maxLength: 3 }),
  users: fc.array(roleEntries(3), { minLength: 1, maxLength: 3 }),
  groups: fc.array(roleEntries(2), { maxLength: 2 }),
  keys: fc.array(
    fc.record({
      user: fc.nat(2),
      perms: fc.option(fc.array(fc.tuple(fc.constantFrom(...PERMISSIONS), scope), { maxLength: 4 }), {
        nil: undefined,
      }),
      expires: fc.constantFrom('never', 'past', 'future'),
    }),
    { maxLength: 3 },
  ),
  token: fc.constantFrom(...INSTANCES),
  sso: fc.record({ user: fc.nat(3), groups: fc.subarray(['g0', 'g1', 'nobody-group']) }),
});

export type World = typeof worldArbitrary extends fc.Arbitrary<infer T> ? T : never;

export interface MadeKey extends NewApiKey {
  user: string;
  expired: boolean;
}

/** users.yml for `w` (every password `hash`), and the keys it made. */
export function usersYaml(w: World, hash: string): { text: string; keys: MadeKey[] } {
  const roleNames = [...Object.keys(BUILTIN_ROLES), ...w.roles.map((_, i) => `own${i}`)];
  const roleList = (entries: World['users'][number]) =>
    `[${entries.map(([r, s]) => `${roleNames[r % roleNames.length]}${s}`).join(', ')}]`;
  const lines = [
    w.roles.length === 0 ? 'Roles: {}' : 'Roles:',
    ...w.roles.map((perms, i) => `  own${i}: [${perms.join(', ')}]`),
    'Users:',
    ...w.users.flatMap((roles, i) => [`  u${i}:`, `    Password: "${hash}"`, `    Roles: ${roleList(roles)}`]),
    w.groups.length === 0 ? 'Groups: {}' : 'Groups:',
    ...w.groups.map((roles, i) => `  g${i}: ${roleList(roles)}`),
  ];
  const keys = w.keys.map((k) => ({
    ...newApiKey(),
    user: `u${k.user % w.users.length}`,
    expired: k.expires === 'past',
  }));
  lines.push(keys.length === 0 ? 'Keys: {}' : 'Keys:');
  w.keys.forEach((k, i) => {
    const made = keys[i]!;
    lines.push(`  ${made.id}:`, `    User: ${made.user}`, `    Hash: "${made.hash}"`);
    if (k.perms) lines.push(`    Permissions: [${k.perms.map(([p, s]) => `${p}${s}`).join(', ')}]`);
    if (k.expires !== 'never') lines.push(`    Expires: "${k.expires === 'past' ? '2020' : '2099'}-01-01T00:00:00Z"`);
  });
  return { text: `${lines.join('\n')}\n`, keys };
}

/** One way of asking: the credentials a request carries, and whom can() is asked about. */
export type Who =
  | { kind: 'user' | 'session'; name: string; headers: Record<string, string> }
  | { kind: 'key'; id: string; expired: boolean; headers: Record<string, string> }
  | { kind: 'token'; instance: InstanceKey; headers: Record<string, string> }
  | { kind: 'admin'; headers: Record<string, string> }
  | { kind: 'sso'; name: string; groups: string[]; headers: Record<string, string> };

/** Everyone of world `w` on every way in: Basic and a session per user, each key, one ApiToken, Admin, the proxy's user. */
export function everyone(w: World, keys: readonly MadeKey[], sessions: ReadonlyMap<string, string>): Who[] {
  const who: Who[] = [];
  for (const [name, cookie] of sessions) {
    who.push({ kind: 'user', name, headers: { authorization: basicAuth(name, PASSWORD) } });
    who.push({ kind: 'session', name, headers: { cookie: `watchdog_session=${cookie}` } });
  }
  for (const k of keys)
    who.push({ kind: 'key', id: k.id, expired: k.expired, headers: { authorization: `Bearer ${k.key}` } });
  who.push({ kind: 'token', instance: w.token, headers: { authorization: basicAuth(w.token, TOKEN_OF[w.token]) } });
  who.push({ kind: 'admin', headers: { authorization: basicAuth(ADMIN.user, ADMIN.password) } });
  // A name from the users file (its own roles count too) or a stranger's.
  const name = w.sso.user < w.users.length ? `u${w.sso.user}` : 'proxy-only';
  who.push({
    kind: 'sso',
    name,
    groups: w.sso.groups,
    headers: { [SSO.user]: name, [SSO.groups]: w.sso.groups.join(',') },
  });
  return who;
}

/** What a request should get: let in, refused for want of `permission` (403), or not a credential there. */
export type Expected =
  | { kind: 'allowed' }
  | { kind: 'forbidden'; permission: string }
  | { kind: 'unauthenticated' }
  /** Another instance's ApiToken on an instance route: 403 `user does not match the instance key`, as always. */
  | { kind: 'other-token' };

function principalOf(who: Who, db: UsersDb): Principal | undefined {
  switch (who.kind) {
    case 'user':
    case 'session': {
      const user = db.users.get(who.name);
      return user && { kind: 'user', user };
    }
    case 'key': {
      const key = db.keys.get(who.id);
      return key && { kind: 'key', key };
    }
    case 'token':
      return { kind: 'instance-token', instance: who.instance };
    case 'admin':
      return { kind: 'admin', name: ADMIN.user };
    case 'sso':
      return { kind: 'sso', name: who.name, groups: who.groups };
  }
}

/** Which ways in a route's family takes; the rest are no credential there (401). */
const TAKES: Record<MatrixRoute['family'], ReadonlySet<Who['kind']>> = {
  instance: new Set(['user', 'key', 'token']),
  logs: new Set(['user', 'key', 'token', 'session', 'admin', 'sso']),
  dashboard: new Set(['user', 'key', 'session', 'admin', 'sso']),
};

/** Whom the dashboard's routes take `who` for; undefined where it is no credential (401). */
export function dashboardPrincipal(who: Who, db: UsersDb): Principal | undefined {
  if (!TAKES.dashboard.has(who.kind) || (who.kind === 'key' && who.expired)) return undefined;
  return principalOf(who, db);
}

/** The answer `who` should get on `route` for `instance`: can()'s, wherever the route takes the credential. */
export function expected(who: Who, route: MatrixRoute, instance: string, db: UsersDb): Expected {
  if (!TAKES[route.family].has(who.kind)) return { kind: 'unauthenticated' };
  // An expired key is refused as unknown: it is no principal at all.
  if (who.kind === 'key' && who.expired) return { kind: 'unauthenticated' };
  const principal = principalOf(who, db);
  if (!principal) throw new Error(`no principal for ${JSON.stringify(who)} in the generated users file`);
  const target = route.everywhere ? ALL_INSTANCES : instance;
  if (can(principal, route.permission, target, db)) return { kind: 'allowed' };
  // Another instance's ApiToken names no principal here: the instance rule refuses it (logs: then the admin rule).
  if (who.kind === 'token') return route.family === 'logs' ? { kind: 'unauthenticated' } : { kind: 'other-token' };
  return { kind: 'forbidden', permission: route.permission };
}

/** The request headers of `who` on `route`: the dashboard's header on the dashboard's routes. */
export const headersFor = (who: Who, route: MatrixRoute): Record<string, string> =>
  route.family === 'dashboard' ? { ...who.headers, 'x-watchdog-dashboard': '1' } : who.headers;
