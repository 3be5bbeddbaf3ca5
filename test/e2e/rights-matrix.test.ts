/**
 * The rights matrix on the real daemon: random users files (roles built in and of their own, on one instance, all
 * or none that exists; keys with their own permissions, expired or not; groups for single sign-on), then every
 * route that names an instance, for every way in (Basic, session, key, ApiToken, Admin, a trusted proxy's user)
 * and every instance, and every route of the dashboard's that names none (the page, `/events`, the instance list,
 * `/api/me`, the user routes). A request is let in exactly when can() (and the grant rule) says so, and then shows
 * only what can() lets it see; a refusal of someone the route knows is 403 `{error, permission}` naming the
 * permission; a credential the route does not take is 401.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { parseUsers, type UsersDb } from '../../src/auth/users-file.ts';
import { ROUTE_DOCS } from '../../src/http/openapi-routes.ts';
import { daemonSuite, type RunningDaemon } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { fuzz } from '../fuzz/_support/fuzz.ts';
import { basicAuth } from './_support/accounts.ts';
import {
  ADMIN,
  CASE_KEYS,
  caseUsers,
  INSTANCES,
  logIn,
  PASSWORD,
  rawRequest,
  replaceUsers,
  rightsConfig,
  rightsReady,
  SSO,
  TOKEN_OF,
} from './_support/rights.ts';
import { keyedRoutesOfDocs, MATRIX_ROUTES, type MatrixRoute, upperRoute } from './_support/rights-routes.ts';
import { ACCOUNT_ROUTES, type AccountRoute, accountRequest, wrongAnswer } from './_support/rights-views.ts';
import {
  dashboardPrincipal,
  type Expected,
  everyone,
  expected,
  headersFor,
  usersYaml,
  type Who,
  type World,
  worldArbitrary,
} from './_support/rights-world.ts';

const test = daemonSuite('e2e :: the rights matrix on the real daemon', {
  config: () => rightsConfig(),
  before: (ctx) => rightsReady(ctx.daemon!),
});

/** Driven by its own test below: a key made for the client writes the users file the property replaces. */
const OWN_KEY = 'POST /api/me/keys';

test('matrix :: it drives every route of the OpenAPI document that takes a credential', () => {
  const driven = MATRIX_ROUTES.map((r) => `${r.method} ${r.doc}`);
  assert.equal([...driven].filter((r) => r !== 'GET /metrics').sort(), keyedRoutesOfDocs().sort());
  const all = [...driven, ...ACCOUNT_ROUTES.map((r) => `${r.method} ${r.doc}`), OWN_KEY];
  const taking = ROUTE_DOCS.filter((r) => r.access !== 'none' && r.access !== 'launch');
  assert.equal(all.sort(), taking.map(upperRoute).sort());
});

/** A users file of one viewer; the ApiToken tried is b's. */
const ONE_USER: World = {
  roles: [],
  users: [[[0, '']]],
  groups: [],
  keys: [],
  token: 'b',
  sso: { user: 0, groups: [] },
};

/** Tallies, so a run that only ever refused (or only let in) cannot pass for a check. */
const seen = { allowed: 0, forbidden: 0, unauthenticated: 0, otherToken: 0, requests: 0, managers: 0, others: 0 };

/** Sends `who`'s request on `route` for `instance` and checks the answer against `want`. */
async function check(d: RunningDaemon, route: MatrixRoute, instance: string, who: Who, want: Expected, file: string) {
  const res = await rawRequest(d, route.method, route.path(instance), headersFor(who, route));
  const what = `${route.method} ${route.path(instance)} as ${JSON.stringify(who)}: expected ${want.kind}, got ${res.status} ${res.body.slice(0, 200)}\n${file}`;
  seen.requests++;
  switch (want.kind) {
    case 'allowed':
      seen.allowed++;
      assert.ok(route.answers.includes(res.status), what);
      return;
    case 'forbidden': {
      seen.forbidden++;
      assert.is(res.status, 403, what);
      const body = JSON.parse(res.body) as { error?: unknown; permission?: unknown };
      assert.is(body.permission, want.permission, what);
      assert.match(String(body.error), ` may not ${want.permission} on `, what);
      return;
    }
    case 'unauthenticated':
      seen.unauthenticated++;
      assert.is(res.status, 401, what);
      assert.not.match(res.body, '"permission"', what);
      return;
    case 'other-token':
      seen.otherToken++;
      assert.equal([res.status, JSON.parse(res.body)], [403, { error: 'user does not match the instance key' }], what);
  }
}

/** Sends `who`'s request on the dashboard's `route`, which names no instance, and checks what it got. */
async function checkAccount(d: RunningDaemon, route: AccountRoute, who: Who, db: UsersDb, file: string) {
  const res = await accountRequest(d, route, who.headers);
  const what = `${route.method} ${route.path} as ${JSON.stringify(who)}: got ${res.status} ${res.body.slice(0, 200)}\n${file}`;
  seen.requests++;
  const p = dashboardPrincipal(who, db);
  if (p === undefined) {
    seen.unauthenticated++;
    assert.is(res.status, 401, what);
    assert.not.match(res.body, '"permission"', what);
    return;
  }
  const wrong = wrongAnswer(route, p, db, res);
  assert.is(wrong, undefined, `${wrong}: ${what}`);
  if (route.kind === 'users') seen[res.status === 403 ? 'others' : 'managers']++;
}

/**
 * The Admin login on an instance route and an ApiToken on the dashboard's are a user name no users file holds: each
 * costs a whole password hash to refuse. They do not depend on the users file, so the test below sends each once
 * per route rather than the property for every file.
 */
const costlyElsewhere = (who: Who, route: Pick<MatrixRoute, 'family'>) =>
  (who.kind === 'admin' && route.family === 'instance') || (who.kind === 'token' && route.family === 'dashboard');
const DASHBOARD = { family: 'dashboard' } as const;

test('matrix :: the Admin login is no credential on the instance routes, nor an ApiToken on the dashboard’s', async ({
  daemon,
}) => {
  const d = daemon!;
  const { text, keys } = usersYaml(ONE_USER, await fastHash(PASSWORD));
  const db = parseUsers(text, 'users.yml');
  if (!db.ok) throw new Error(db.problems.join('\n'));
  assert.ok(await replaceUsers(d, text));
  const sent = new Set<string>();
  for (const route of MATRIX_ROUTES)
    for (const who of everyone(ONE_USER, keys, new Map()).filter((x) => costlyElsewhere(x, route))) {
      // On b, an ApiToken of b: the token is right, the route is the wrong one for it.
      await check(d, route, 'b', who, expected(who, route, 'b', db.db), text);
      sent.add(`${who.kind} ${route.family}`);
    }
  for (const route of ACCOUNT_ROUTES)
    for (const who of everyone(ONE_USER, keys, new Map()).filter((x) => costlyElsewhere(x, DASHBOARD)))
      await checkAccount(d, route, who, db.db, text);
  assert.equal([...sent].sort(), ['admin instance', 'token dashboard']);
});

/** Each kind of answer was seen often enough for the matrix to say something. */
const covered = () =>
  seen.allowed >= 100 &&
  seen.forbidden >= 200 &&
  seen.unauthenticated >= 100 &&
  seen.otherToken >= 10 &&
  seen.managers >= 10 &&
  seen.others >= 10;

test('matrix :: every request is let in exactly when can() says so, every refusal names the right', async ({
  daemon,
}) => {
  const d = daemon!;
  const hash = await fastHash(PASSWORD);
  await fuzz(
    'rights/matrix',
    fc.asyncProperty(worldArbitrary, async (w) => {
      const { text, keys } = usersYaml(w, hash);
      const parsed = parseUsers(text, 'users.yml');
      if (!parsed.ok) throw new Error(`the generated users file is invalid:\n${parsed.problems.join('\n')}`);
      assert.ok(await replaceUsers(d, text), `the daemon refused the users file:\n${text}`);
      const sessions = new Map<string, string>();
      for (const name of parsed.db.users.keys()) sessions.set(name, await logIn(d, name, PASSWORD));
      for (const route of MATRIX_ROUTES)
        for (const who of everyone(w, keys, sessions).filter((x) => !costlyElsewhere(x, route)))
          for (const instance of route.everywhere ? ['a'] : INSTANCES)
            await check(d, route, instance, who, expected(who, route, instance, parsed.db), text);
      for (const route of ACCOUNT_ROUTES)
        for (const who of everyone(w, keys, sessions).filter((x) => !costlyElsewhere(x, DASHBOARD)))
          await checkAccount(d, route, who, parsed.db, text);
    }),
    // Each run is some 500 requests: few runs, each bounded; a failure reports the seed and the shrunk users file.
    // The floor is every count asserted below: a budget cut short by a loaded machine runs on until each holds.
    { seed: 0x41_0001, numRuns: 8, runTimeoutMs: 20_000, budgetMs: 20_000, floor: covered },
  );
  assert.ok(covered(), JSON.stringify(seen));
});

/**
 * Last, because it writes the users file: the daemon reads it again when asked (before the answer) and once more when
 * its watcher sees the change, which a later replaceUsers could take for its own read.
 */
test('matrix :: a key of one’s own is made for a user of the file alone, and holds exactly that user’s rights', async ({
  daemon,
}) => {
  const d = daemon!;
  const text = caseUsers(await fastHash(PASSWORD));
  assert.ok(await replaceUsers(d, text));
  type Headers = Record<string, string>;
  const mint = (headers: Headers) => rawRequest(d, 'POST', '/api/me/keys', headers);
  const made: Array<{ user: string; key: string }> = [];
  for (const headers of [
    { authorization: basicAuth('mo', PASSWORD) },
    { cookie: `watchdog_session=${await logIn(d, 'fr', PASSWORD)}` },
  ] as Headers[]) {
    const res = await mint(headers);
    assert.is(res.status, 201, res.body);
    made.push(JSON.parse(res.body) as { user: string; key: string });
  }
  assert.equal(
    made.map((m) => m.user),
    ['mo', 'fr'],
  );
  // Not for the Admin login, a key (its new key would outlive it), nor a proxy's user: 403, no right named.
  for (const headers of [
    { authorization: basicAuth(ADMIN.user, ADMIN.password) },
    { authorization: `Bearer ${CASE_KEYS.live.key}` },
    { [SSO.user]: 'mo' },
  ] as Headers[]) {
    const res = await mint(headers);
    assert.equal(
      [res.status, JSON.parse(res.body).permission],
      [403, undefined],
      `${JSON.stringify(headers)}: ${res.body}`,
    );
  }
  for (const headers of [{ authorization: basicAuth('a', TOKEN_OF.a) }, {}] as Headers[])
    assert.is((await mint(headers)).status, 401, JSON.stringify(headers));
  // Each key on every instance route, for every instance: can() with the file as it is now, the keys in it.
  const now = parseUsers(await readFile(join(d.dir, 'users.yml'), 'utf8'), 'users.yml');
  if (!now.ok) throw new Error(now.problems.join('\n'));
  for (const m of made) {
    const id = /^wdk_([0-9a-f]{12})_/.exec(m.key)?.[1] ?? '';
    assert.is(now.db.keys.get(id)?.grants, undefined, 'all of its user’s rights, no Permissions of its own');
    const who: Who = { kind: 'key', id, expired: false, headers: { authorization: `Bearer ${m.key}` } };
    for (const route of MATRIX_ROUTES)
      for (const instance of route.everywhere ? ['a'] : INSTANCES)
        await check(d, route, instance, who, expected(who, route, instance, now.db), m.user);
  }
  const log = d.log();
  const asked = log.lastIndexOf('users file reloaded (user routes)');
  await waitFor(
    'the watcher’s read of the written file',
    () => d.log().indexOf('users file reloaded (file change)', asked) > 0,
  );
});

test.run();
