/**
 * Fuzzing the daemon's listening socket with bytes no client should send: random bytes, broken request lines, huge
 * headers, broken chunked bodies, conflicting lengths, pipelined junk and half-closed or abandoned connections.
 * While each one is still open, another instance's server checks in; it must be answered 200 (and counted), and
 * the daemon must keep answering afterwards. The server is the daemon's own (`startHttpServers` with the app) on
 * 127.0.0.1, port 0.
 */
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { type HttpServers, startHttpServers } from '../../src/http/server.ts';
import { tempSuite, within } from '../_support/env.ts';
import { rawRequest } from '../http/_support/app.ts';
import { binaryString, fuzz } from './_support/fuzz.ts';
import { ALPHA_SECRET, BETA_SECRET, type Fixture, fixture, fuzzApp } from './_support/http-fixture.ts';

const CRLF = '\r\n';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** A request head as clients mangle it: any method, target and version, with or without the line end. */
const requestLine = fc
  .tuple(
    fc.constantFrom('GET', 'POST', 'HEAD', 'PRI', 'CONNECT', 'G ET', '', 'post', '\u0000', 'GET\t'),
    fc.constantFrom(
      '/server_api/alpha/ping',
      '/instances/alpha/status',
      '*',
      'http://x/',
      '//',
      '/\u0000',
      '/%',
      '/é',
      'x'.repeat(70_000),
      '',
    ),
    fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', 'HTTP/1.1 ', 'http/1.1', 'HTTP/', ''),
    fc.constantFrom(CRLF, '\n', '\r', '', CRLF + CRLF),
  )
  .map(([m, t, v, end]) => `${m} ${t} ${v}${end}`);

const header = fc.oneof(
  fc.constantFrom(
    'Host: 127.0.0.1',
    'Content-Length: 5',
    'Content-Length: -1',
    'Content-Length: 99999999999999999999',
    'Content-Length: 1, 2',
    'Transfer-Encoding: chunked',
    'Transfer-Encoding: gzip, chunked',
    'Transfer-Encoding: chunked, identity',
    'Expect: 100-continue',
    'Connection: upgrade',
    'Upgrade: websocket',
    `Authorization: Basic ${b64(`alpha:${ALPHA_SECRET}`)}`,
    'Authorization: Basic',
    ' folded: continuation',
    'No-Colon',
    ': empty-name',
    `X-Big: ${'a'.repeat(20_000)}`,
  ),
  binaryString({ maxLength: 40 }).map((s) => `X-Fuzz: ${s}`),
);

const chunkedBody = fc.constantFrom(
  `5${CRLF}hello${CRLF}0${CRLF}${CRLF}`,
  `ZZ${CRLF}hello${CRLF}`,
  `5${CRLF}hel`,
  `-1${CRLF}${CRLF}`,
  `ffffffffffffffffff${CRLF}x${CRLF}`,
  `5;ext="x${CRLF}hello${CRLF}0${CRLF}${CRLF}`,
  `0${CRLF}Trailer: x${CRLF}`,
);

/** What one misbehaving client sends, in pieces, and how it leaves: FIN (half-close), reset, or just waiting. */
const garbage = fc.record({
  bytes: fc.oneof(
    fc.uint8Array({ maxLength: 2_000 }).map((u) => Buffer.from(u)),
    fc
      .tuple(
        requestLine,
        fc.array(header, { maxLength: 4 }),
        fc.constantFrom(CRLF, ''),
        fc.oneof(chunkedBody, fc.string({ maxLength: 30 })),
      )
      .map(([line, hs, end, body]) => Buffer.from(line + hs.map((h) => h + CRLF).join('') + end + body, 'utf8')),
    // A whole valid request followed by pipelined junk on the same connection.
    fc
      .uint8Array({ maxLength: 300 })
      .map((u) =>
        Buffer.concat([Buffer.from(`GET /health HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}${CRLF}`), Buffer.from(u)]),
      ),
  ),
  /** Where the bytes are split into separate writes. */
  splits: fc.array(fc.nat(), { maxLength: 3 }),
  leave: fc.constantFrom('half-close', 'reset', 'wait'),
});

type Garbage = typeof garbage extends fc.Arbitrary<infer T> ? T : never;

/** Opens a connection and sends `g`; resolves once written, with the socket still open unless it left. */
async function misbehave(port: number, g: Garbage): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined); // the server may reset a connection it cannot parse: that is its right
  socket.on('data', () => undefined);
  await within(2_000, 'connect', new Promise<void>((resolve) => socket.once('connect', () => resolve())));
  const cuts = [...new Set(g.splits.map((n) => n % (g.bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const cut of [...cuts, g.bytes.length]) {
    if (socket.destroyed) break;
    socket.write(g.bytes.subarray(from, cut));
    from = cut;
  }
  if (g.leave === 'half-close') socket.end();
  else if (g.leave === 'reset') socket.resetAndDestroy();
  return socket;
}

/** beta's server checking in, over its own connection, as the kit does. */
async function betaChecksIn(port: number): Promise<number> {
  const head = `POST /server_api/beta/ping HTTP/1.1${CRLF}Authorization: Basic ${b64(`beta:${BETA_SECRET}`)}${CRLF}Content-Length: 0`;
  const res = await rawRequest(port, head, 3_000);
  return res.status;
}

const socket = tempSuite<{ fx: Fixture; servers: HttpServers; port: number }>('fuzz/http socket', {
  prefix: 'wd-fuzz-socket-',
  ctx: { fx: undefined as never, servers: undefined as never, port: 0 },
  before: async (ctx) => {
    ctx.fx = await fixture(ctx.dir);
    const { app } = fuzzApp(ctx.fx.registry, { admin: false, loopback: false });
    ctx.servers = await startHttpServers(app, [{ host: '127.0.0.1', port: 0 }]);
    ctx.port = ctx.servers.bound[0]?.port ?? 0;
  },
  after: (ctx) => ctx.servers.close(),
});

socket('fuzz/http socket :: garbage on one connection never stops another server from checking in', async (ctx) => {
  const { fx, port } = ctx;
  const open: Socket[] = [];
  try {
    await fuzz(
      'http/socket-garbage',
      fc.asyncProperty(garbage, async (g) => {
        const bad = await misbehave(port, g);
        open.push(bad);
        const before = fx.beta.calls.filter((c) => c === 'checkin').length;
        assert.is(await betaChecksIn(port), 200, 'beta checks in while the garbage connection is open');
        assert.is(fx.beta.calls.filter((c) => c === 'checkin').length, before + 1, 'the check-in was counted');
        bad.destroy();
      }),
      { seed: 0x50c4_01, numRuns: 120, runTimeoutMs: 6_000, budgetMs: 20_000 },
    );
  } finally {
    for (const s of open) s.destroy();
  }
  // Still serving the app too, after every kind of garbage.
  const health = await rawRequest(port, 'GET /health HTTP/1.1', 3_000);
  assert.is(health.status, 200);
});

/** Check-in requests as servers (and others) send them: keys in every spelling, right and wrong secrets. */
const ping = fc.record({
  // Upper case only: on the wire `post` is no method at all (the parser answers 400), while fetch() upper-cases it.
  method: fc.constantFrom('POST', 'POST', 'GET', 'PUT', 'DELETE'),
  key: fc.constantFrom('alpha', 'beta', 'gamma', 'ghost', 'ALPHA', '%61lpha', 'alph%61', 'alpha%20', 'al%2Fpha', ''),
  tail: fc.constantFrom('/ping', '/ping', '/ping/', '/ping?x=1', '/PING', '//ping', '/ping#f'),
  auth: fc.oneof(
    fc
      .tuple(
        fc.constantFrom('Basic ', 'basic ', 'BASIC  ', 'Basic\t', 'Bearer '),
        fc.constantFrom('alpha', 'beta', 'gamma', 'ALPHA', ''),
        fc.constantFrom(ALPHA_SECRET, BETA_SECRET, `${ALPHA_SECRET} `, '', 'x:y'),
      )
      .map(([scheme, user, secret]) => `${scheme}${b64(`${user}:${secret}`)}`),
    fc.constantFrom(undefined, 'Basic', 'Basic !!', `Basic ${b64(`alpha:${ALPHA_SECRET}`)}=`),
  ),
});

socket('fuzz/http socket :: a check-in gets the same answer on the socket as from the app alone', async (ctx) => {
  const { fx, port } = ctx;
  // The same routes without node:http and the adapter in front: what the socket must agree with.
  const { app } = fuzzApp(fx.registry, { admin: false, loopback: false });
  const checkins = () => fx.alpha.calls.length + fx.beta.calls.length;
  await fuzz(
    'http/socket-agrees',
    fc.asyncProperty(ping, async (r) => {
      const path = `/server_api/${r.key}${r.tail}`;
      const auth = r.auth === undefined ? '' : `${CRLF}Authorization: ${r.auth}`;
      const before = checkins();
      const viaSocket = await rawRequest(port, `${r.method} ${path} HTTP/1.1${auth}${CRLF}Content-Length: 0`, 3_000);
      const countedBySocket = checkins() - before;
      const headers: Record<string, string> = r.auth === undefined ? {} : { authorization: r.auth };
      const viaApp = await app.request(path, { method: r.method, headers });
      const countedByApp = checkins() - before - countedBySocket;
      assert.is(viaSocket.status, viaApp.status, `${r.method} ${path} ${r.auth ?? '(no Authorization)'}`);
      assert.is(countedBySocket, viaSocket.status === 200 ? 1 : 0, 'a check-in is counted exactly when answered 200');
      assert.is(countedByApp, countedBySocket);
    }),
    { seed: 0x50c4_02, numRuns: 300, runTimeoutMs: 6_000 },
  );
});

socket.run();
