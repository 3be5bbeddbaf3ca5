import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type HttpServer, startHttpServer } from '../../src/http/server.ts';
import { tempDir, waitFor } from '../_support/env.ts';
import { type Harness, harness, memoryInstance, memoryRegistry, rawRequest, send } from './_support/app.ts';

const SECRET_TEXT = 'TOP-SECRET-OUTSIDE-CONTENT';
const ZIP = Buffer.from('PK\u0003\u0004 pretend client zip');

interface Ctx {
  root: string;
  cleanup: () => Promise<void>;
  h: Harness;
  big: Buffer;
  server: HttpServer;
}

/**
 * instances/alpha/binaries/ holds the served files, plus symlinks: one inside (allowed), one to a file outside
 * and one to a folder outside (both refused). outside/secret.txt is what no request may ever read.
 */
async function setup(): Promise<Ctx> {
  const tmp = await tempDir('wd-http-bin-');
  const bin = join(tmp.path, 'instances', 'alpha', 'binaries');
  const outside = join(tmp.path, 'outside');
  await mkdir(join(bin, 'sub'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), SECRET_TEXT);
  await writeFile(join(bin, 'SS14.Client.zip'), ZIP);
  await writeFile(join(bin, 'notes.txt'), 'hello');
  await writeFile(join(bin, 'sub', 'inner.ZIP'), ZIP);
  await writeFile(join(bin, 'name with space.zip'), ZIP);
  await writeFile(join(bin, '.hidden'), 'SECRET-DOT');
  await mkdir(join(bin, '.git'), { recursive: true });
  await writeFile(join(bin, '.git', 'config'), '[remote]');
  const big = randomBytes(3 * 1024 * 1024 + 17);
  await writeFile(join(bin, 'big.zip'), big);
  await symlink(join(bin, 'SS14.Client.zip'), join(bin, 'link-in.zip'));
  await symlink(join(outside, 'secret.txt'), join(bin, 'link-out.zip'));
  await symlink(outside, join(bin, 'dir-link'));
  const alpha = memoryInstance('alpha', { apiToken: 't', binariesDir: bin });
  const nobin = memoryInstance('nobin', { binariesDir: join(tmp.path, 'instances', 'nobin', 'binaries') });
  const h = harness(memoryRegistry(alpha, nobin));
  const server = await startHttpServer(h.app, { port: 0 });
  return { root: tmp.path, cleanup: tmp.cleanup, h, big, server };
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A suite sharing one set-up (files, links, a server) for all its tests, removed after the last. */
function routesSuite(name: string) {
  const s = suite<Ctx>(name, {} as Ctx);
  s.before(async (ctx) => {
    Object.assign(ctx, await setup());
  });
  s.after(async (ctx) => {
    await ctx.server?.close();
    await ctx.cleanup?.();
  });
  return s;
}

const files = routesSuite('binaries routes :: serving');

files('binaries routes :: serves a real file, .zip as application/zip, with Content-Length', async ({ h }) => {
  const res = await send(h.app, 'GET', '/instances/alpha/binaries/SS14.Client.zip');
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/zip');
  assert.is(res.headers.get('content-length'), String(ZIP.length));
  assert.equal(Buffer.from(await res.arrayBuffer()), ZIP);
});

files('binaries routes :: hidden names are never served (404), even encoded or as a folder', async ({ h }) => {
  for (const path of ['.hidden', '%2Ehidden', '.git/config', 'sub/../.hidden']) {
    const res = await send(h.app, 'GET', `/instances/alpha/binaries/${path}`);
    assert.is(res.status, 404, path);
    assert.not.match(await res.text(), /SECRET-DOT|remote/, path);
  }
});

files('binaries routes :: other extensions are application/octet-stream; .ZIP in any case is a zip', async ({ h }) => {
  const txt = await send(h.app, 'GET', '/instances/alpha/binaries/notes.txt');
  assert.is(txt.headers.get('content-type'), 'application/octet-stream');
  assert.is(await txt.text(), 'hello');
  const inner = await send(h.app, 'GET', '/instances/alpha/binaries/sub/inner.ZIP');
  assert.is(inner.status, 200);
  assert.is(inner.headers.get('content-type'), 'application/zip');
  const spaced = await send(h.app, 'GET', '/instances/alpha/binaries/name%20with%20space.zip');
  assert.is(spaced.status, 200);
});

files(
  'binaries routes :: HEAD answers headers with Content-Length and no body, over a real socket',
  async ({ server }) => {
    const res = await fetch(`${server.url}/instances/alpha/binaries/big.zip`, { method: 'HEAD' });
    assert.is(res.status, 200);
    assert.is(res.headers.get('content-length'), String(3 * 1024 * 1024 + 17));
    assert.is(res.headers.get('content-type'), 'application/zip');
    assert.is((await res.arrayBuffer()).byteLength, 0);
  },
);

files('binaries routes :: a multi-megabyte file streams intact over a real socket', async ({ server, big }) => {
  const res = await fetch(`${server.url}/instances/alpha/binaries/big.zip`);
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-length'), String(big.length));
  assert.is(sha(new Uint8Array(await res.arrayBuffer())), sha(big));
});

files('binaries routes :: a client that leaves mid-download does not break the server', async ({ server, big }) => {
  const ac = new AbortController();
  const res = await fetch(`${server.url}/instances/alpha/binaries/big.zip`, { signal: ac.signal });
  const reader = res.body?.getReader();
  await reader?.read();
  ac.abort();
  await reader?.cancel().catch(() => undefined);
  const again = await fetch(`${server.url}/instances/alpha/binaries/big.zip`);
  assert.is(sha(new Uint8Array(await again.arrayBuffer())), sha(big));
});

files('binaries routes :: aborted downloads and HEADs leave no file descriptor open', async ({ server, root }) => {
  await writeFile(join(root, 'instances', 'alpha', 'binaries', 'huge.zip'), Buffer.alloc(24 * 1024 * 1024));
  const fds = () => readdirSync('/proc/self/fd').length;
  const baseline = fds();
  for (let i = 0; i < 10; i++) {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/instances/alpha/binaries/huge.zip`, { signal: ac.signal });
    await res.body?.getReader().read();
    ac.abort();
    await (await fetch(`${server.url}/instances/alpha/binaries/huge.zip`, { method: 'HEAD' })).arrayBuffer();
  }
  await waitFor('file descriptors back to the baseline', () => fds() <= baseline + 4, 10_000); // a leak would be 10
});

files('binaries routes :: a symlink that stays inside is served', async ({ h }) => {
  const res = await send(h.app, 'GET', '/instances/alpha/binaries/link-in.zip');
  assert.is(res.status, 200);
  assert.equal(Buffer.from(await res.arrayBuffer()), ZIP);
});

files('binaries routes :: missing files, folders and unknown instances → 404, no listing', async ({ h }) => {
  for (const path of [
    '/instances/alpha/binaries/nope.zip',
    '/instances/alpha/binaries/sub',
    '/instances/alpha/binaries/sub/',
    '/instances/alpha/binaries/',
    '/instances/alpha/binaries',
    '/instances/ghost/binaries/SS14.Client.zip',
    '/instances/nobin/binaries/SS14.Client.zip',
  ]) {
    const res = await send(h.app, 'GET', path);
    assert.is(res.status, 404, path);
    assert.not.match(await res.text(), 'inner.ZIP');
  }
});

files('binaries routes :: other methods → 405 with Allow: GET, HEAD', async ({ h }) => {
  const res = await send(h.app, 'POST', '/instances/alpha/binaries/SS14.Client.zip');
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'GET, HEAD');
});

files.run();

// ---

const traversal = routesSuite('binaries routes :: traversal');

/** Paths after `/instances/alpha/binaries/` that aim at outside/secret.txt (three levels up) or elsewhere. */
const ATTACKS = [
  '../../../outside/secret.txt',
  './../../../outside/secret.txt',
  'sub/../../../../outside/secret.txt',
  '%2e%2e/%2e%2e/%2e%2e/outside/secret.txt',
  '%2E%2E/%2E%2E/%2E%2E/outside/secret.txt',
  '.%2e/.%2e/.%2e/outside/secret.txt',
  '..%2f..%2f..%2foutside%2fsecret.txt',
  '..%2F..%2F..%2Foutside%2Fsecret.txt',
  '%2e%2e%2f%2e%2e%2f%2e%2e%2foutside%2fsecret.txt',
  '..%5c..%5c..%5coutside%5csecret.txt',
  '..\\..\\..\\outside\\secret.txt',
  '%252e%252e/%252e%252e/%252e%252e/outside/secret.txt',
  '%c0%ae%c0%ae/%c0%ae%c0%ae/%c0%ae%c0%ae/outside/secret.txt',
  'link-out.zip',
  'dir-link/secret.txt',
  'dir-link%2fsecret.txt',
  '/etc/passwd',
  '%2fetc%2fpasswd',
  '%2Fetc/passwd',
  'SS14.Client.zip%00.txt',
  '%00',
  '..',
  '.',
  '%2e%2e',
  'sub//inner.ZIP',
];

traversal('binaries routes :: traversal through app.request → 400 or 404, never the outside content', async ({ h }) => {
  for (const attack of ATTACKS) {
    const res = await send(h.app, 'GET', `/instances/alpha/binaries/${attack}`);
    assert.ok(res.status === 400 || res.status === 404, `${attack} → ${res.status}`);
    assert.not.match(await res.text(), SECRET_TEXT, attack);
  }
});

traversal(
  'binaries routes :: traversal over a raw socket (no client-side normalisation) → 4xx, never the outside content',
  async ({ server }) => {
    for (const attack of ATTACKS) {
      for (const method of ['GET', 'HEAD']) {
        const { status, text } = await rawRequest(
          server.port,
          `${method} /instances/alpha/binaries/${attack} HTTP/1.1`,
        );
        assert.ok(status === 400 || status === 404, `${method} ${attack} → ${status}`);
        assert.not.match(text, SECRET_TEXT, attack);
      }
    }
    // Absolute-form request target, and a path escaping the whole mount.
    for (const target of [
      `http://127.0.0.1:${server.port}/instances/alpha/binaries/../../../outside/secret.txt`,
      '/instances/alpha/binaries/../../../../../../../../../../../../etc/passwd',
    ]) {
      const { status, text } = await rawRequest(server.port, `GET ${target} HTTP/1.1`);
      assert.ok(status >= 400 && status < 500, `${target} → ${status}`);
      assert.not.match(text, SECRET_TEXT);
      assert.not.match(text, 'root:');
    }
  },
);

traversal('binaries routes :: the served file is still reachable afterwards', async ({ server }) => {
  const { status, text } = await rawRequest(server.port, 'GET /instances/alpha/binaries/SS14.Client.zip HTTP/1.1');
  assert.is(status, 200);
  assert.ok(text.endsWith(ZIP.toString('latin1')));
});

traversal.run();
