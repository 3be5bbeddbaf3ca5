/**
 * TrustedProxies (src/http/request-info.ts): the client address of the audit line and of the dashboard's loopback rule
 * comes from X-Forwarded-For / Forwarded only when the socket peer is a trusted proxy. Run over a real socket: the
 * test connects from chosen loopback addresses (127.0.0.5 plays the proxy, 127.0.0.9 a client on this machine), so
 * the peer is the kernel's, not a header.
 */

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BusEvents } from '../../src/bus.ts';
import { createBus } from '../../src/bus.ts';
import { createApp } from '../../src/http/app.ts';
import { clientInfo, forwardedChain } from '../../src/http/request-info.ts';
import { type HttpServer, startHttpServer } from '../../src/http/server.ts';
import { rawRequest } from '../_support/http-request.ts';
import { basic, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

const PROXY = '127.0.0.5';
const LOCAL = '127.0.0.9';

interface Ctx {
  server: HttpServer | null;
  trusted: string[];
  refusals: BusEvents['daemon:request-refused'][];
}

function get(
  ctx: Ctx,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(path, `http://127.0.0.1:${ctx.server!.port}`);
  return rawRequest(url, { method, from, headers: { host: `localhost:${ctx.server!.port}`, ...headers } });
}

const test = suite<Ctx>('trusted proxies :: over a real socket', { server: null, trusted: [], refusals: [] });

test.before(async (ctx) => {
  const bus = createBus();
  bus.on('daemon:request-refused', (e) => ctx.refusals.push(e));
  const app = createApp({
    registry: memoryRegistry(memoryInstance('alpha', { apiToken: 't' })),
    bus,
    log: recordingLogger(),
    version: '1',
    trustedProxies: () => ctx.trusted,
  });
  ctx.server = await startHttpServer(app, { port: 0 });
});
test.after(async (ctx) => {
  await ctx.server?.close();
});
test.before.each((ctx) => {
  ctx.refusals.length = 0;
  ctx.trusted = [PROXY, '10.0.0.0/8'];
});

/** The remote of a refused (wrong token) control request, as audited, sent from `from` with `headers`. */
async function auditedRemote(ctx: Ctx, from: string, headers: Record<string, string>): Promise<string | undefined> {
  const res = await get(ctx, from, 'POST', '/instances/alpha/restart', {
    authorization: basic('alpha', 'wrong'),
    ...headers,
  });
  assert.is(res.status, 401);
  assert.is(ctx.refusals.length, 1);
  return ctx.refusals[0]!.remote;
}

test('trusted-proxies :: the audit remote is the forwarded client when the peer is a trusted proxy', async (ctx) => {
  assert.is(await auditedRemote(ctx, PROXY, { 'x-forwarded-for': '203.0.113.7' }), '203.0.113.7');
});

test('trusted-proxies :: past a chain of trusted proxies, the nearest untrusted hop is the client (what the client wrote is not)', async (ctx) => {
  const chain = { 'x-forwarded-for': '127.0.0.1, 198.51.100.2, 10.1.2.3' };
  assert.is(await auditedRemote(ctx, PROXY, chain), '198.51.100.2');
});

test('trusted-proxies :: Forwarded (RFC 7239) is read when there is no X-Forwarded-For', async (ctx) => {
  const fwd = { forwarded: 'for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"' };
  assert.is(await auditedRemote(ctx, PROXY, fwd), '2001:db8::1');
});

test('trusted-proxies :: from a peer that is not trusted, the forwarded headers are ignored', async (ctx) => {
  assert.is(await auditedRemote(ctx, LOCAL, { 'x-forwarded-for': '203.0.113.7' }), LOCAL);
  ctx.refusals.length = 0;
  ctx.trusted = [];
  assert.is(await auditedRemote(ctx, PROXY, { 'x-forwarded-for': '203.0.113.7' }), PROXY, 'none configured');
});

test('trusted-proxies :: dashboard rule: through a trusted proxy a remote client is not local, even though the proxy is', async (ctx) => {
  const remote = await get(ctx, PROXY, 'GET', '/api/instances', { 'x-forwarded-for': '203.0.113.7' });
  assert.is(remote.status, 403);
  assert.match(remote.body, 'only to clients on this machine');
  const local = await get(ctx, PROXY, 'GET', '/api/instances', { 'x-forwarded-for': '127.0.0.1' });
  assert.is(local.status, 200, local.body);
  const unknown = await get(ctx, PROXY, 'GET', '/api/instances', { 'x-forwarded-for': 'unknown' });
  assert.is(unknown.status, 403, 'an unknown client is not local');
  const direct = await get(ctx, PROXY, 'GET', '/api/instances', {});
  assert.is(direct.status, 200, 'a client on the proxy machine itself, forwarding nothing');
});

test('trusted-proxies :: dashboard rule: a loopback peer that names a proxy it is not trusted for is refused', async (ctx) => {
  ctx.trusted = [];
  const named: Array<Record<string, string>> = [
    { 'x-forwarded-for': '127.0.0.1' },
    { forwarded: 'for=127.0.0.1' },
    { via: '1.1 caddy' },
    { 'x-real-ip': '127.0.0.1' },
  ];
  for (const headers of named) {
    const res = await get(ctx, LOCAL, 'GET', '/api/instances', headers);
    assert.is(res.status, 403, JSON.stringify(headers));
    assert.match(res.body, 'came through a proxy on this machine');
    assert.match(res.body, 'TrustedProxies');
  }
  assert.is((await get(ctx, LOCAL, 'GET', '/api/instances', {})).status, 200, 'no proxy header: a local client');
});

test.run();

// ---

const parse = suite('trusted proxies :: parsing');

parse(
  'trusted-proxies :: forwardedChain reads X-Forwarded-For first, ports and brackets stripped, junk kept as unknown',
  () => {
    const h = (o: Record<string, string>) => (n: string) => o[n];
    assert.equal(forwardedChain(h({ 'x-forwarded-for': '1.2.3.4:5, [::1]:80, ::ffff:10.0.0.1, junk' })), [
      '1.2.3.4',
      '::1',
      '10.0.0.1',
      undefined,
    ]);
    assert.equal(forwardedChain(h({ 'x-forwarded-for': '1.1.1.1', forwarded: 'for=2.2.2.2' })), ['1.1.1.1']);
    assert.equal(forwardedChain(h({ forwarded: 'for=_hidden, by=1.1.1.1;for=3.3.3.3' })), [undefined, '3.3.3.3']);
    const long = Array.from({ length: 1000 }, () => '9.9.9.9').join(',');
    assert.is(forwardedChain(h({ 'x-forwarded-for': long })).length, 32, 'bounded');
  },
);

parse('trusted-proxies :: clientInfo: an IPv4-mapped peer matches an IPv4 trusted entry', () => {
  const info = clientInfo('::ffff:127.0.0.5', (n) => (n === 'x-forwarded-for' ? '8.8.8.8' : undefined), [PROXY]);
  assert.equal(info, { address: '8.8.8.8', peer: PROXY, forwarded: true, untrustedProxy: null, trustedPeer: true });
});

parse.run();
