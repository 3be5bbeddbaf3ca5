import { writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type HttpServer, startHttpServer } from '../../src/http/server.ts';
import { tempDir, waitFor } from '../_support/env.ts';
import { authCases, b64, basic, harness, memoryInstance, memoryRegistry, rawRequest } from './_support/app.ts';

const TOKEN = 'api:token:with:colons';
const SECRET = 'launch-secret';

async function start() {
  const alpha = memoryInstance('alpha', { apiToken: TOKEN, secret: SECRET });
  const h = harness(memoryRegistry(alpha, memoryInstance('beta', { apiToken: 'b' })));
  return { h, alpha, server: await startHttpServer(h.app, { port: 0 }) };
}

type Ctx = Awaited<ReturnType<typeof start>>;

const post = (server: HttpServer, path: string, authorization?: string) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: authorization === undefined ? {} : { authorization } });

// ---

const socket = suite<Ctx>('server :: over a real socket', {} as Ctx);
socket.before(async (ctx) => {
  Object.assign(ctx, await start());
});
socket.after(async (ctx) => {
  await ctx.server?.close();
});

socket('server :: binds 127.0.0.1 by default and reports its URL without a trailing slash', async ({ server }) => {
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(server.port > 0);
  assert.is(server.url, `http://127.0.0.1:${server.port}`);
  const res = await fetch(`${server.url}/health`);
  assert.is(res.status, 200);
});

socket('server :: every auth case on control, ping and status, over the socket', async ({ server, h, alpha }) => {
  const families: [string, string, string][] = [
    ['POST', 'restart', TOKEN],
    ['POST', 'ping', SECRET],
    ['GET', 'status', TOKEN],
  ];
  for (const [method, route, secret] of families) {
    for (const tc of authCases('alpha', secret)) {
      const before = alpha.calls.length;
      const path = route === 'ping' ? `/server_api/${tc.key}/ping` : `/instances/${tc.key}/${route}`;
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: tc.header === undefined ? {} : { authorization: tc.header },
      });
      await res.arrayBuffer();
      assert.is(res.status, tc.status, `${method} ${path}: ${tc.name}`);
      assert.is(res.headers.get('www-authenticate'), tc.status === 401 ? 'Basic realm="watchdog"' : null, tc.name);
      const expectCall = tc.status === 200 && route !== 'status';
      assert.is(alpha.calls.length, before + (expectCall ? 1 : 0), `${route}: ${tc.name}`);
    }
  }
  assert.match(h.controls.at(-1)?.remote ?? '', /127\.0\.0\.1/, 'the remote address reaches the audit event');
  assert.match(h.rejections.at(-1)?.remote ?? '', /127\.0\.0\.1/, 'and the rejected check-in');
});

socket('server :: GET on a control route → 405 with Allow, over the socket', async ({ server }) => {
  const res = await fetch(`${server.url}/instances/alpha/restart`, {
    headers: { authorization: basic('alpha', TOKEN) },
  });
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'POST');
});

socket('server :: a POST body is ignored and the connection stays usable', async ({ server, alpha }) => {
  const before = alpha.calls.length;
  const res = await fetch(`${server.url}/instances/alpha/stop`, {
    method: 'POST',
    headers: { authorization: basic('alpha', TOKEN), 'content-type': 'application/octet-stream' },
    body: new Uint8Array(256 * 1024),
  });
  assert.is(res.status, 200);
  assert.is((await post(server, '/server_api/alpha/ping', basic('alpha', SECRET))).status, 200);
  assert.equal(alpha.calls.slice(before), ['control:stop', 'checkin']);
});

/** mulberry32: a seeded generator, so a failing fuzz case can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One malformed request head (request line + headers, no blank line) that must earn a 4xx. */
function malformed(rand: () => number, i: number): Buffer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const route = pick([
    '/instances/alpha/restart',
    '/instances/alpha/update',
    '/instances/alpha/stop',
    '/instances/alpha/rollback',
    '/server_api/alpha/ping',
    '/instances/alpha/status',
  ]);
  const badAuth = pick([
    'Basic !!!',
    `Basic ${b64('alpha')}`,
    `Basic ${b64('alpha:wrong')}`,
    `Basic ${b64('beta:' + TOKEN)}`,
    'Bearer abc',
    'Basic',
    `Basic ${'A'.repeat(1 + Math.floor(rand() * 4000))}`,
    `Basic ${Buffer.from(Array.from({ length: 12 }, () => Math.floor(rand() * 256))).toString('base64')}`,
  ]);
  switch (i % 8) {
    case 0: // wrong or unknown methods on control routes
      return Buffer.from(
        `${pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO', 'BREW', 'get', 'PO ST', 'POST\t'])} ${route} HTTP/1.1\r\nAuthorization: ${badAuth}`,
      );
    case 1: // bad credentials
      return Buffer.from(`POST ${route} HTTP/1.1\r\nAuthorization: ${badAuth}`);
    case 2: {
      // huge headers, 1 to 17 KB (past node's 16 KB limit: 431)
      const size = 1024 + Math.floor(rand() * 16 * 1024);
      const where =
        rand() < 0.5
          ? `Authorization: Basic ${'Q'.repeat(size)}`
          : `X-Pad: ${'x'.repeat(size)}\r\nAuthorization: ${badAuth}`;
      return Buffer.from(`POST ${route} HTTP/1.1\r\n${where}`);
    }
    case 3: {
      // unicode keys, raw and percent-encoded
      const key = pick(['ключ', '🔑', 'alpha\u0301', 'ａｌｐｈａ', '鍵', 'a\u202eb']);
      const enc = rand() < 0.5 ? encodeURIComponent(key) : key;
      return Buffer.from(`POST /instances/${enc}/restart HTTP/1.1\r\nAuthorization: ${basic(key, TOKEN)}`, 'utf8');
    }
    case 4: {
      // long paths
      const len = 200 + Math.floor(rand() * 12_000);
      const path = pick([
        `/instances/${'a'.repeat(len)}/restart`,
        `/instances/alpha/binaries/${'x/'.repeat(len / 2)}`,
        `/${'%41'.repeat(len / 3)}`,
        `/server_api/${'k'.repeat(len)}/ping`,
      ]);
      return Buffer.from(`${pick(['GET', 'POST'])} ${path} HTTP/1.1\r\nAuthorization: ${badAuth}`);
    }
    case 5: // bytes that are not valid in headers
      return Buffer.concat([
        Buffer.from(`POST ${route} HTTP/1.1\r\nAuthorization: Basic `),
        Buffer.from([0x00, 0x7f, 0xff, 0x0b, 0xc3, 0x28]),
      ]);
    case 6: // broken request lines
      return Buffer.from(
        pick([
          `POST ${route} HTTP/9.9`,
          `POST ${route}`,
          `POST  ${route}  HTTP/1.1`,
          `POST http://[::1 HTTP/1.1`,
          `POST *${route} HTTP/1.1`,
          'POST \\instances\\alpha\\restart HTTP/1.1',
          `POST ${route}#frag%zz HTTP/1.1`,
        ]),
      );
    default: // header syntax errors
      return Buffer.from(
        `POST ${route} HTTP/1.1\r\n${pick(['Authorization Basic abc', ': empty-name', 'Bad Name: x', `Authorization: ${badAuth}\r\n folded: continuation`, 'Content-Length: -1', 'Content-Length: 5\r\nContent-Length: 6', 'Transfer-Encoding: chunked\r\nContent-Length: 3'])}`,
      );
  }
}

socket(
  'server :: 1,000 malformed requests each get a clean 4xx; a valid ping still succeeds afterwards',
  async ({ server, h, alpha }) => {
    const rand = prng(20_251_123);
    const total = 1000;
    const deadline = Date.now() + 60_000;
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < total) {
        if (Date.now() > deadline) throw new Error(`fuzz loop exceeded 60 s after ${next} requests`);
        const i = next++;
        const head = malformed(rand, i);
        const { status } = await rawRequest(server.port, head, 10_000);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status < 400 || status > 499) {
          assert.unreachable(
            `request #${i} answered ${status}: ${JSON.stringify(head.toString('latin1').slice(0, 300))}`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    const counted = [...statuses.values()].reduce((a, b) => a + b, 0);
    assert.is(counted, total);
    assert.ok(
      statuses.has(405) && statuses.has(400) && statuses.has(431) && statuses.has(401),
      `status mix: ${JSON.stringify([...statuses])}`,
    );

    const before = alpha.calls.length;
    assert.is((await post(server, '/server_api/alpha/ping', basic('alpha', SECRET))).status, 200);
    assert.equal(alpha.calls.slice(before), ['checkin']);
    assert.ok(alpha.calls.every((c) => c === 'checkin' || c.startsWith('control:')));
    assert.equal(
      h.log.lines.filter((l) => l.startsWith('error')),
      [],
      'no request ended in an internal error',
    );
  },
);

socket.run();

// ---

const lifecycle = suite('server :: lifecycle');

/** Opens a raw connection and writes `text`; resolves once connected. */
function openSocket(
  port: number,
  text: string,
): Promise<{ socket: Socket; closed: () => boolean; data: () => string }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    let data = '';
    const s = connect(port, '127.0.0.1', () => {
      s.write(text);
      resolve({ socket: s, closed: () => closed, data: () => data });
    });
    s.on('data', (d: Buffer) => (data += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => (closed = true));
  });
}

/**
 * Closes `server`; true when close() finished on its own, false when it was still waiting on the clients after 8 s
 * (a real hang: they were destroyed here so the run goes on). The server's own cut comes after a grace of 250 ms.
 */
async function closesOnItsOwn(server: HttpServer, clients: Socket[]): Promise<boolean> {
  let rescued = false;
  const rescue = setTimeout(() => {
    rescued = true;
    for (const c of clients) c.destroy();
  }, 8000);
  await server.close();
  clearTimeout(rescue);
  return !rescued;
}

lifecycle(
  'server :: close() finishes promptly with an idle keep-alive client and a half-sent request connected',
  async () => {
    const { server } = await start();
    const idle = await openSocket(server.port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    await waitFor('the keep-alive response', () => idle.data().includes('"status":"ok"'));
    const hanging = await openSocket(server.port, 'POST /server_api/alpha/ping HTTP/1.1\r\nHost: x\r\n'); // never finished
    // Without closeIdleConnections/closeAllConnections this waits for keep-alive (5 s) and headers (60 s) timeouts.
    assert.ok(await closesOnItsOwn(server, [idle.socket, hanging.socket]), 'close() did not wait for the clients');
    await waitFor('both client sockets to be closed by the server', () => idle.closed() && hanging.closed(), 10_000);
    await server.close(); // idempotent
    const refused = await fetch(`${server.url}/health`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, 'nothing listens after close');
  },
);

lifecycle('server :: close() cuts a download whose client stopped reading', async () => {
  const tmp = await tempDir('wd-http-close-');
  try {
    await writeFile(join(tmp.path, 'big.zip'), Buffer.alloc(32 * 1024 * 1024, 7));
    const h = harness(memoryRegistry(memoryInstance('alpha', { binariesDir: tmp.path })));
    const server = await startHttpServer(h.app, { port: 0 });
    const slow = await openSocket(server.port, 'GET /instances/alpha/binaries/big.zip HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('the download to start', () => slow.data().includes('HTTP/1.1 200'));
    slow.socket.pause(); // a client that stops reading: the response can never finish on its own
    assert.ok(await closesOnItsOwn(server, [slow.socket]), 'close() did not wait for the download');
    slow.socket.resume();
    await waitFor('the download connection to be cut', () => slow.closed(), 10_000);
    assert.ok(slow.data().length < 32 * 1024 * 1024, 'the download was cut, not completed');
  } finally {
    await tmp.cleanup();
  }
});

lifecycle('server :: a port in use rejects with an actionable message', async () => {
  const { server } = await start();
  try {
    const { h } = await start().then(async (c) => {
      await c.server.close();
      return c;
    });
    const err = await startHttpServer(h.app, { port: server.port }).then(
      (s) => s.close().then(() => null),
      (e: unknown) => e,
    );
    assert.instance(err, Error);
    assert.match((err as Error).message, `cannot listen on 127.0.0.1:${server.port}`);
    assert.match((err as Error).message, /EADDRINUSE/);
  } finally {
    await server.close();
  }
});

lifecycle.run();
