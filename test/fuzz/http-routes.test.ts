/**
 * Fuzzing every route of the daemon's HTTP app through `app.request()`: random methods, paths (each route's, with
 * odd keys, encodings, extra segments and queries, and junk), headers and bodies. Whatever arrives, the app answers
 * with a status below 500 (503 only where it is documented: an instance still starting, too many log followers),
 * never throws, logs no "request failed", and never serves a hidden file of the binaries folder or a file outside it
 * (through `..` in any encoding, or a link inside the folder that points out).
 */
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { tempSuite, within } from '../_support/env.ts';
import { binaryString, fuzz, webPath, webSegment } from './_support/fuzz.ts';
import {
  ADMIN,
  ALPHA_SECRET,
  ALPHA_TOKEN,
  BETA_SECRET,
  type FuzzApp,
  fixture,
  fuzzApp,
  HIDDEN,
  OUTSIDE,
} from './_support/http-fixture.ts';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const basic = (user: string, password: string) => `Basic ${b64(`${user}:${password}`)}`;

/** Every route of README "HTTP API", with `{key}` where the instance goes. */
const ROUTES = [
  '/instances/{key}/restart',
  '/instances/{key}/update',
  '/instances/{key}/stop',
  '/instances/{key}/rollback',
  '/instances/{key}/status',
  '/instances/{key}/logs',
  '/instances/{key}/binaries/client.zip',
  '/instances/{key}/binaries/sub/a.txt',
  '/instances/{key}/binaries/',
  '/instances/{key}/binaries/out-link',
  '/instances/{key}/binaries/in-link',
  '/instances/{key}/binaries/.hidden',
  '/server_api/{key}/ping',
  '/watchdog/padlock',
  '/health',
  '/openapi.json',
  '/',
  '/dashboard/app.js',
  '/dashboard/style.css',
  '/statechart.svg',
  '/events',
  '/metrics',
  '/api/instances',
  '/api/instances/{key}/log',
  '/api/instances/{key}/restart',
  '/api/instances/{key}/update',
  '/api/instances/{key}/stop',
  '/api/instances/{key}/rollback',
];

const KEYS = [
  'alpha',
  'beta',
  'gamma',
  'ghost',
  'ALPHA',
  '',
  '%61lpha',
  '..',
  '%2e%2e',
  'a%2Fb',
  '%00',
  '%ZZ',
  'é',
  'x'.repeat(300),
];

/** Path junk: traversal in its spellings, encoded separators and NULs, doubled slashes, unicode. */
const SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2e%2f',
  '%2f',
  '%5c',
  '\\',
  '%00',
  '%',
  '%c0%af',
  '.hidden',
  '',
  'é',
  '%F0%9F%99%82',
  ';x',
  'secret.txt',
  'out-link',
  'in-link',
  '%2e%2e%2fsecret.txt',
  '..%5csecret.txt',
  '%2e%2e%2f%2e%2e%2fsecret.txt',
];

const QUERIES = [
  '',
  '?lines=3',
  '?lines=0',
  '?lines=1001',
  '?lines=-1',
  '?lines=1e3',
  '?lines=99999999999999999999',
  '?n=5',
  '?n=abc',
  '?follow=1&seconds=1',
  '?follow=1&seconds=0',
  '?follow=1&from=0&seconds=1',
  '?follow=1&from=99999999999999999999',
  '?follow=1&from=9007199254740991&seconds=1',
  '?logs=1',
  '?a=%ZZ',
  '?lines=3&lines=4',
  '#frag',
];

const path: fc.Arbitrary<string> = fc.oneof(
  // The binaries route on its own, since it is the one that reads files: real ones, hidden ones and escapes.
  {
    weight: 2,
    arbitrary: fc
      .array(fc.constantFrom(...SEGMENTS, 'client.zip', 'sub', 'a.txt', 'in-link'), { minLength: 1, maxLength: 3 })
      .map((segments) => `/instances/alpha/binaries/${segments.join('/')}`),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...ROUTES),
        fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom('alpha', 'beta', 'gamma') },
          { weight: 2, arbitrary: fc.constantFrom(...KEYS) },
          { weight: 1, arbitrary: webSegment() },
        ),
        fc.oneof(
          { weight: 4, arbitrary: fc.constant([]) },
          {
            weight: 1,
            arbitrary: fc.array(fc.oneof(fc.constantFrom(...SEGMENTS), webSegment()), {
              minLength: 1,
              maxLength: 2,
            }),
          },
        ),
        fc.constantFrom(...QUERIES),
      )
      .map(([route, key, extra, query]) => {
        const base = route.replace('{key}', key);
        return (extra.length > 0 ? `${base.replace(/\/$/, '')}/${extra.join('/')}` : base) + query;
      }),
  },
  { weight: 1, arbitrary: webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom(...SEGMENTS, 'instances', 'api', 'server_api', 'alpha', 'binaries'), { maxLength: 6 })
      .map((s) => `/${s.join('/')}`),
  },
);

const METHODS = [
  'GET',
  'GET',
  'HEAD',
  'POST',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'PROPFIND',
  'get',
  'Post',
  'X-CUSTOM',
];

const authorization = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(basic('alpha', ALPHA_TOKEN), basic(ADMIN.username, ADMIN.password)) },
  fc.constantFrom(
    basic('alpha', ALPHA_TOKEN),
    basic('alpha', ALPHA_SECRET),
    basic('beta', BETA_SECRET),
    basic('beta', ''),
    basic('gamma', 'x'),
    basic(ADMIN.username, ADMIN.password),
    basic('alpha', 'wrong'),
    'Basic !!',
    'Basic',
    'Bearer x',
    `Basic ${b64('\u0000:\u0000')}`,
    `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}`,
  ),
  fc.string({ maxLength: 40 }).filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
);

/** Header values fetch accepts (no CR, LF or NUL): otherwise the test, not the app, would throw. */
const headerValue = fc.oneof(
  fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', '*/*', '', 'x'.repeat(2000)),
  fc.string({ maxLength: 30 }).filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
);

const headers = fc.record(
  {
    authorization,
    'content-type': headerValue,
    accept: headerValue,
    'x-watchdog-dashboard': fc.constantFrom('1', ''),
    'if-modified-since': fc.constantFrom('Wed, 21 Oct 2015 07:28:00 GMT', 'garbage', ''),
    range: fc.constantFrom('bytes=0-1', 'bytes=99999999999-', 'bytes=-0', 'bytes=a-b', 'bytes=1-0'),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0'),
    'x-forwarded-for': fc.constantFrom('127.0.0.1', '10.0.0.1, 127.0.0.1'),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 2 }),
  binaryString({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 200 }),
  fc.constantFrom('{"Reason":"x"}', '{', 'x'.repeat(100_000)),
);

const request = fc.record({
  method: fc.constantFrom(...METHODS),
  path,
  headers,
  body,
  /** Which of the three apps: admin configured, no admin but a client on the loopback, or neither. */
  app: fc.nat(2),
});

/** Status codes the app may answer with: any below 500, and 503 where README documents it. */
function checkStatus(status: number, what: string): void {
  assert.ok(status >= 100 && (status < 500 || status === 503), `${what} → ${status}`);
}

type Req = typeof request extends fc.Arbitrary<infer T> ? T : never;

async function send(target: FuzzApp, r: Req): Promise<{ res: Response; text: string }> {
  const method = r.method.toUpperCase();
  const init: RequestInit = { method: r.method, headers: r.headers };
  if (method !== 'GET' && method !== 'HEAD' && r.body !== undefined) init.body = r.body;
  const res = await target.app.request(r.path, init);
  // A followed log or the event stream never ends by itself: the status is all a fuzz run needs of it.
  const type = res.headers.get('content-type') ?? '';
  if (/ndjson|event-stream/.test(type)) {
    await res.body?.cancel();
    return { res, text: '' };
  }
  return { res, text: await res.text() };
}

const routes = tempSuite<{ apps: FuzzApp[] }>('fuzz/http routes', {
  prefix: 'wd-fuzz-http-',
  ctx: { apps: [] },
  before: async (ctx) => {
    const { registry } = await fixture(ctx.dir);
    ctx.apps = [
      fuzzApp(registry, { admin: true, loopback: false }),
      fuzzApp(registry, { admin: false, loopback: true }),
      fuzzApp(registry, { admin: false, loopback: false }),
    ];
  },
});

routes('fuzz/http :: any method, path, headers and body get an answer below 500, never a throw', async ({ apps }) => {
  const statuses = new Map<number, number>();
  let served = 0;
  await fuzz(
    'http/routes',
    fc.asyncProperty(request, async (r) => {
      const target = apps[r.app];
      if (!target) throw new Error(`no app ${r.app}`);
      const { res, text } = await within(4_000, `${r.method} ${r.path}`, send(target, r));
      checkStatus(res.status, `${r.method} ${r.path}`);
      assert.not.ok(text.includes(HIDDEN) || text.includes(OUTSIDE), `${r.method} ${r.path} served a file it must not`);
      if (res.status === 200 && (text === 'zip bytes' || text === 'a')) served += 1;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const failed = target.log.lines.filter((l) => l.includes('request failed'));
      assert.equal(failed, [], `${r.method} ${r.path} was logged as failed`);
    }),
    { seed: 0x4177_01, numRuns: 600, runTimeoutMs: 8_000, budgetMs: 20_000 },
  );
  // Past the routing: a generator that only ever reached 404 would prove nothing about the routes themselves.
  const reached = [...statuses.keys()].filter((s) => s !== 404);
  assert.ok(reached.length >= 5, `statuses seen: ${JSON.stringify([...statuses])}`);
  assert.ok(served > 0, 'the binaries route served a file at least once, so the content check above had teeth');
  if (process.env.FUZZ_REPORT) console.log(`statuses: ${JSON.stringify([...statuses].sort((a, b) => a[0] - b[0]))}`);
});

routes.run();
