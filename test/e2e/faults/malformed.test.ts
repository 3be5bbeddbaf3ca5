import { connect } from 'node:net';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite, type StatusJson } from '../../_support/daemon.ts';
import { freePort } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, sleep, statusOf, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * 1,000 malformed requests across every route, sent as raw bytes (fetch refuses to send most of them), while a
 * real server checks in every 0.3 s with TimeoutSeconds 3. Each request must get its right status code, the
 * daemon must not crash, and the instance must stay `running` throughout.
 */

interface Probe {
  kind: string;
  raw: Buffer;
  /** Acceptable status codes. */
  expect: number[];
}

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const KEY = 'c';
const TOKEN = 'tok';

/** A request as bytes; `Connection: close` so every answer ends with the socket. */
function req(method: string, path: string, headers: Array<[string, string] | string> = [], body = ''): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const h of headers) lines.push(typeof h === 'string' ? h : `${h[0]}: ${h[1]}`);
  if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}
const auth = (value: string): [string, string] => ['Authorization', value];

const ROUTES: Array<{ path: string; allowed: string[]; protected: boolean }> = [
  ...['restart', 'update', 'stop', 'rollback'].map((a) => ({
    path: `/instances/${KEY}/${a}`,
    allowed: ['POST'],
    protected: true,
  })),
  { path: `/instances/${KEY}/status`, allowed: ['GET', 'HEAD'], protected: true },
  { path: `/server_api/${KEY}/ping`, allowed: ['POST'], protected: true },
  { path: `/instances/${KEY}/binaries/client.zip`, allowed: ['GET', 'HEAD'], protected: false },
  { path: '/watchdog/padlock', allowed: ['GET', 'HEAD'], protected: false },
  { path: '/health', allowed: ['GET', 'HEAD'], protected: false },
];
const PROTECTED = ROUTES.filter((r) => r.protected);

/** The malformed families; each yields probes for index i (deterministic, no randomness). */
const FAMILIES: Array<(i: number) => Probe> = [
  // Known methods a route does not take: 405 (404 is acceptable for a route that does not exist for it).
  (i) => {
    const route = ROUTES[i % ROUTES.length]!;
    const wrong = ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'POST', 'GET'].filter((m) => !route.allowed.includes(m));
    return {
      kind: 'wrong method',
      raw: req(wrong[i % wrong.length]!, route.path, [auth(`Basic ${b64(`${KEY}:${TOKEN}`)}`)]),
      expect: [404, 405],
    };
  },
  // Method tokens HTTP does not know: the parser refuses them.
  (i) => ({
    kind: 'unknown method',
    raw: req(['FOO', 'GETT', 'BREW', 'P0ST', 'get'][i % 5]!, ROUTES[i % ROUTES.length]!.path),
    expect: [400],
  }),
  // Broken Basic credentials on protected routes (each answered at its step of the auth order).
  (i) => {
    const route = PROTECTED[i % PROTECTED.length]!;
    const method = route.allowed[0]!;
    const cases: Array<[string, number]> = [
      ['Basic !!!not-base64!!!', 400],
      [`Basic ${b64('no-colon-here')}`, 400],
      [`Basic ${b64(Buffer.from([0xff, 0xfe, 0x3a, 0x78]))}`, 400], // not UTF-8
      ['Basic', 400],
      ['Basic ====', 400],
      ['Bearer abc', 401],
      ['Digest username="c"', 401],
      [`Basic ${b64(`other:${TOKEN}`)}`, 403],
      [`Basic ${b64(`${KEY}:wrong`)}`, 401],
      [`Basic ${b64(`${KEY}:${'x'.repeat(6000)}`)}`, 401], // long but under the header limit
    ];
    const [value, status] = cases[i % cases.length]!;
    return { kind: `bad auth (${value.slice(0, 12)})`, raw: req(method, route.path, [auth(value)]), expect: [status] };
  },
  // Missing Authorization on a protected route.
  (i) => {
    const route = PROTECTED[i % PROTECTED.length]!;
    return { kind: 'no auth', raw: req(route.allowed[0]!, route.path), expect: [401] };
  },
  // Header sections over Node's 16 KB limit: one huge header, or very many.
  (i) => {
    const route = ROUTES[i % ROUTES.length]!;
    const headers =
      i % 2 === 0
        ? [`X-Huge: ${'h'.repeat(20_000 + i)}`]
        : Array.from({ length: 1200 }, (_, n) => `X-Many-${n}: ${'v'.repeat(10)}`);
    return { kind: 'huge headers', raw: req(route.allowed[0]!, route.path, headers), expect: [431] };
  },
  // Header lines the parser must refuse.
  (i) => {
    const bad = ['X-Bad Header: v', 'NoColonAtAll', 'X-Ctl: a\u0001b', ' X-Folded: v', 'X-Nul: a\u0000b'][i % 5]!;
    return { kind: 'bad header', raw: req('GET', ROUTES[i % ROUTES.length]!.path, [bad]), expect: [400] };
  },
  // Unicode keys: percent-encoded in the path, UTF-8 in the credentials. Unknown instance → 404; user ≠ key → 403.
  (i) => {
    const keys = ['✓', 'été', '😀', 'ключ', 'a\u200bb'];
    const key = keys[i % keys.length]!;
    const enc = encodeURIComponent(key);
    const route = PROTECTED[i % PROTECTED.length]!;
    const path = route.path.replace(`/${KEY}/`, `/${enc}/`);
    const sameUser = i % 2 === 0;
    return {
      kind: 'unicode key',
      raw: req(route.allowed[0]!, path, [auth(`Basic ${b64(`${sameUser ? key : KEY}:${TOKEN}`)}`)]),
      expect: [sameUser ? 404 : 403],
    };
  },
  // Long paths: unknown routes 404, long unknown keys 404 (authenticated as themselves).
  (i) => {
    const n = 200 + ((i * 997) % 4000); // key in the path and in the credentials: under 16 KB together
    if (i % 2 === 0) return { kind: 'long path', raw: req('GET', `/${'seg/'.repeat(n / 4)}x`), expect: [404] };
    const key = 'k'.repeat(n);
    return {
      kind: 'long key',
      raw: req('GET', `/instances/${key}/status`, [auth(`Basic ${b64(`${key}:${TOKEN}`)}`)]),
      expect: [404],
    };
  },
  // A request line longer than the header limit.
  (i) => ({
    kind: 'path over the limit',
    raw: req('GET', `/instances/${KEY}/binaries/${'p'.repeat(17_000 + i)}`),
    expect: [431],
  }),
  // Escapes and traversal in the binaries route: refused, never served.
  (i) => {
    const paths = ['%ZZ', '..%2F..%2Fdata.json', '%2e%2e/%2e%2e/data.json', 'a%00b', '..', '%2F', 'x%5C..%5Cdata.json'];
    return {
      kind: 'bad escape',
      raw: req('GET', `/instances/${KEY}/binaries/${paths[i % paths.length]!}`),
      expect: [400, 404],
    };
  },
  // Broken framing: the parser refuses it.
  (i) => {
    const base = `POST /server_api/${KEY}/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n`;
    const raws = [
      `${base}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `${base}Content-Length: abc\r\n\r\n`,
      `${base}Content-Length: -1\r\n\r\n`,
      `${base}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
      'HELLO WORLD\r\n\r\n',
      'GET /health HTTP/9.9\r\nHost: x\r\n\r\n',
      '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003', // a TLS ClientHello on the plain port
    ];
    // A body whose chunk framing breaks after complete headers: the check-in is answered from its headers (no
    // credentials: 401) before the parser reaches the body, or refused by the parser (400) if it gets there first.
    if (i % (raws.length + 1) === raws.length) {
      return {
        kind: 'bad body framing',
        raw: Buffer.from(`${base}Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n`, 'latin1'),
        expect: [400, 401],
      };
    }
    return { kind: 'bad framing', raw: Buffer.from(raws[i % (raws.length + 1)]!, 'latin1'), expect: [400, 505] };
  },
];

/** Sends raw bytes, returns the status code of the answer (null: none within the deadline). */
function send(port: number, raw: Buffer): Promise<number | null> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    let got = '';
    const done = (status: number | null) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => done(null), 10_000);
    sock.on('connect', () => sock.write(raw));
    sock.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      if (m) done(Number(m[1]));
    });
    sock.on('error', () => undefined); // the server may reset after answering a parse error
    sock.on('close', () =>
      done(/^HTTP\/1\.[01] (\d{3})/.exec(got) ? Number(/^HTTP\/1\.[01] (\d{3})/.exec(got)![1]) : null),
    );
  });
}

const test = daemonSuite('e2e :: faults: 1,000 malformed requests', {
  ctx: { pid: null as number | null },
  config: async () =>
    testConfig({
      instances: [{ key: KEY, port: await freePort(), runCommand: fixture('echo-env.mjs'), timeoutSeconds: 3 }],
    }),
  before: async (ctx) => {
    ctx.pid = (await waitStatus(ctx.daemon!, KEY, TOKEN, 'server.running', running)).pid;
  },
  after: (ctx) => killGroup(ctx.pid),
});

test('malformed :: right status codes, no crash, and check-ins keep the instance running throughout', async (ctx) => {
  const d = ctx.daemon!;
  const port = Number(new URL(d.url).port);
  const probes = Array.from({ length: 1000 }, (_, i) =>
    FAMILIES[i % FAMILIES.length]!(Math.floor(i / FAMILIES.length)),
  );
  const wrong: string[] = [];
  const states: StatusJson[] = [];
  const CONCURRENCY = 8;
  const PACE_MS = 5;
  const startedAt = Date.now();
  const status = () => statusOf(d, KEY, TOKEN);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < probes.length; i = next++) {
      const p = probes[i]!;
      // Paced over at least PACE_MS × 1000, longer than TimeoutSeconds, so "running throughout" means something.
      const due = startedAt + i * PACE_MS - Date.now();
      if (due > 0) await sleep(due);
      const code = await send(port, p.raw);
      if (code === null || !p.expect.includes(code))
        wrong.push(`#${i} ${p.kind}: got ${code}, expected ${p.expect.join('|')}`);
      if (i % 25 === 0) states.push(await status());
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  states.push(await status());

  assert.is(wrong.length, 0, `${wrong.length} wrong answers:\n${wrong.slice(0, 30).join('\n')}`);
  assert.ok(states.length >= 40, 'sampled throughout');
  for (const s of states) {
    assert.is(s.state, 'server.running', `state during the flood: ${s.state}`);
    assert.is(s.pid, ctx.pid, 'never relaunched');
    assert.is(s.restarts, 0);
  }
  const checkins = new Set(states.map((s) => s.lastCheckinAt));
  assert.ok(checkins.size >= 8, `check-ins kept arriving (${checkins.size} distinct)`);
  assert.is(d.proc.exitCode, null, 'the daemon is alive');
  const health = await fetch(`${d.url}/health`);
  assert.is(health.status, 200);
  assert.not.match(d.log(), /request failed/, 'no handler threw');
});

test.run();
