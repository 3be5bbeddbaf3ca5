/**
 * The rights matrix on the real daemon: random users files (roles built in and of their own, on one instance, all
 * or none that exists; keys with their own permissions, expired or not; groups for single sign-on), then every
 * route that names an instance, for every way in (Basic, session, key, ApiToken, Admin, a trusted proxy's user)
 * and every instance. A request is let in exactly when can() says so; a refusal of someone the route knows is 403
 * `{error, permission}` naming the route's permission; a credential the route does not take is 401.
 */
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { parseUsers } from '../../src/auth/users-file.ts';
import { daemonSuite, type RunningDaemon } from '../_support/daemon.ts';
import { fastHash } from '../auth/_support/hash.ts';
import { fuzz } from '../fuzz/_support/fuzz.ts';
import { INSTANCES, logIn, PASSWORD, rawRequest, replaceUsers, rightsConfig, rightsReady } from './_support/rights.ts';
import { keyedRoutesOfDocs, MATRIX_ROUTES, type MatrixRoute } from './_support/rights-routes.ts';
import {
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

test('matrix :: it drives every route of the OpenAPI document that names an instance', () => {
  const driven = MATRIX_ROUTES.map((r) => `${r.method} ${r.doc}`);
  assert.equal([...driven].filter((r) => r !== 'GET /metrics').sort(), keyedRoutesOfDocs().sort());
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
const seen = { allowed: 0, forbidden: 0, unauthenticated: 0, otherToken: 0, requests: 0 };

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

/**
 * The Admin login on an instance route and an ApiToken on the dashboard's are a user name no users file holds: each
 * costs a whole password hash to refuse. They do not depend on the users file, so the test below sends each once
 * per route rather than the property for every file.
 */
const costlyElsewhere = (who: Who, route: MatrixRoute) =>
  (who.kind === 'admin' && route.family === 'instance') || (who.kind === 'token' && route.family === 'dashboard');

test('matrix :: the Admin login is no credential on the instance routes, nor an ApiToken on the dashboard’s', async ({
  daemon,
}) => {
  const d = daemon!;
  const { text, keys } = usersYaml(ONE_USER, await fastHash(PASSWORD));
  const db = parseUsers(text, 'users.yml');
  assert.ok(db.ok && (await replaceUsers(d, text)));
  const sent = new Set<string>();
  for (const route of MATRIX_ROUTES)
    for (const who of everyone(ONE_USER, keys, new Map()).filter((x) => costlyElsewhere(x, route))) {
      // On b, an ApiToken of b: the token is right, the route is the wrong one for it.
      await check(d, route, 'b', who, expected(who, route, 'b', db.db), text);
      sent.add(`${who.kind} ${route.family}`);
    }
  assert.equal([...sent].sort(), ['admin instance', 'token dashboard']);
});

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
    }),
    // Each run is some 500 requests: few runs, each bounded; a failure reports the seed and the shrunk users file.
    { seed: 0x41_0001, numRuns: 8, runTimeoutMs: 20_000, budgetMs: 20_000, floor: () => seen.forbidden >= 200 },
  );
  assert.ok(
    seen.allowed >= 100 && seen.forbidden >= 200 && seen.unauthenticated >= 100 && seen.otherToken >= 10,
    JSON.stringify(seen),
  );
});

test.run();
