/**
 * The access matrix on the real daemon: random users (built-in roles and roles of their own, on one instance or
 * all), random keys (scoped, expired or not) and random requests over every row of ROUTE_PERMISSIONS. Each request
 * is let through exactly when can() says so; every refusal of a known principal is 403 naming the row's permission;
 * an expired key or a wrong password is 401.
 */
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { newApiKey } from '../../src/auth/api-keys.ts';
import { can, type Principal } from '../../src/auth/can.ts';
import { BUILTIN_ROLES, PERMISSIONS, type Permission } from '../../src/auth/permissions.ts';
import { parseUsers } from '../../src/auth/users-file.ts';
import { type InstanceRoute, ROUTE_PERMISSIONS } from '../../src/http/route-permissions.ts';
import { daemonSuite } from '../_support/daemon.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { accountsConfig, basicAuth, instancesUp, send, writeUsers } from '../e2e/_support/accounts.ts';
import { fuzz } from './_support/fuzz.ts';

const PASSWORD = 'matrix-password';
const INSTANCES = ['a', 'b'] as const;
const other = (i: string) => (i === 'a' ? 'b' : 'a');
const ROWS = Object.keys(ROUTE_PERMISSIONS) as InstanceRoute[];
/** Grants on one instance more often than on all: the cross-instance refusals are what most needs checking. */
const scope = fc.constantFrom('', '@a', '@b', '@a', '@b');

const world = fc.record({
  roles: fc.array(fc.subarray([...PERMISSIONS], { minLength: 1 }), { maxLength: 2 }),
  users: fc.array(fc.array(fc.tuple(fc.nat(5), scope), { maxLength: 3 }), { minLength: 1, maxLength: 3 }),
  keys: fc.array(
    fc.record({
      user: fc.nat(2),
      perms: fc.option(fc.array(fc.tuple(fc.constantFrom(...PERMISSIONS), scope), { maxLength: 4 }), {
        nil: undefined,
      }),
      expired: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  requests: fc.array(
    fc.record({
      who: fc.tuple(fc.constantFrom('user', 'key', 'wrong-password'), fc.nat(3)),
      row: fc.constantFrom(...ROWS),
      instance: fc.constantFrom(...INSTANCES),
    }),
    { minLength: 6, maxLength: 12 },
  ),
});

type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

async function usersText(w: World, hash: string) {
  const roleNames = [...Object.keys(BUILTIN_ROLES), ...w.roles.map((_, i) => `own${i}`)];
  const keys = w.keys.map((k) => ({ ...k, made: newApiKey(), user: k.user % w.users.length }));
  const lines = ['Roles:', ...w.roles.map((perms, i) => `  own${i}: [${perms.join(', ')}]`)];
  if (w.roles.length === 0) lines[0] = 'Roles: {}';
  lines.push('Users:');
  w.users.forEach((roles, i) => {
    const list = roles.map(([r, s]) => `${roleNames[r % roleNames.length]}${s}`);
    lines.push(`  u${i}:`, `    Password: "${hash}"`, `    Roles: [${list.join(', ')}]`);
  });
  lines.push(keys.length === 0 ? 'Keys: {}' : 'Keys:');
  for (const k of keys) {
    lines.push(`  ${k.made.id}:`, `    User: u${k.user}`, `    Hash: "${k.made.hash}"`);
    if (k.perms) lines.push(`    Permissions: [${k.perms.map(([p, s]) => `${p}${s}`).join(', ')}]`);
    if (k.expired) lines.push('    Expires: "2020-01-01T00:00:00Z"');
  }
  return { text: `${lines.join('\n')}\n`, keys };
}

const test = daemonSuite('fuzz :: access matrix on the real daemon', {
  config: () => accountsConfig(),
  before: (ctx) => instancesUp(ctx.daemon!),
});

test('access matrix :: every request is allowed exactly when can() says so', async ({ daemon }) => {
  const d = daemon!;
  const hash = await fastHash(PASSWORD);
  let checked = 0;
  /** Refusals on one instance of a right the principal holds on the other: the scope is what refused them. */
  let crossInstance = 0;
  let allowed = 0;
  await fuzz(
    'access/matrix',
    fc.asyncProperty(world, async (w) => {
      const { text, keys } = await usersText(w, hash);
      const parsed = parseUsers(text, 'users.yml');
      if (!parsed.ok) throw new Error(`the generated file is invalid:\n${parsed.problems.join('\n')}`);
      const db = parsed.db;
      await writeUsers(d, text);
      for (const r of w.requests) {
        const permission: Permission = ROUTE_PERMISSIONS[r.row];
        const [method = 'GET', pattern = ''] = r.row.split(' ');
        const path = pattern.replace(':key', r.instance).replace('*', 'nothing.txt');
        const [kind, n] = r.who;
        let auth: string;
        let expect: 'allowed' | 401 | 403;
        if (kind === 'key' && keys.length > 0) {
          const k = keys[n % keys.length]!;
          auth = `Bearer ${k.made.key}`;
          const principal: Principal = { kind: 'key', key: db.keys.get(k.made.id)! };
          expect = k.expired ? 401 : can(principal, permission, r.instance, db) ? 'allowed' : 403;
          if (expect === 403 && can(principal, permission, other(r.instance), db)) crossInstance++;
        } else {
          const name = `u${n % w.users.length}`;
          const right = kind !== 'wrong-password';
          auth = basicAuth(name, right ? PASSWORD : `${PASSWORD}x`);
          const principal: Principal = { kind: 'user', user: db.users.get(name)! };
          expect = !right ? 401 : can(principal, permission, r.instance, db) ? 'allowed' : 403;
          if (expect === 403 && can(principal, permission, other(r.instance), db)) crossInstance++;
        }
        const res = await send(d, method, path, auth);
        const what = `${r.row} on ${r.instance} as ${kind} ${n}: ${res.status} ${res.body.slice(0, 200)}\n${text}`;
        if (expect === 'allowed') allowed++;
        if (expect === 'allowed') assert.ok(res.status !== 401 && res.status !== 403, what);
        else assert.is(res.status, expect, what);
        if (expect === 403) assert.is(JSON.parse(res.body).permission, permission, what);
        checked++;
      }
    }),
    { seed: 0xacce55, numRuns: 14, runTimeoutMs: 15_000, budgetMs: 12_000, floor: () => crossInstance >= 5 },
  );
  assert.ok(checked >= 40, `only ${checked} requests checked`);
  assert.ok(allowed >= 5 && crossInstance >= 5, `allowed ${allowed}, refused for scope ${crossInstance}: too few`);
});

test.run();
