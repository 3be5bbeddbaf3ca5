/** `GET /instances/:key/logs` (src/http/log-routes.ts): the tail as JSON, following as NDJSON, instance or Admin access. */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import type { AdminCredentials } from '../../src/http/account-access.ts';
import { createApp } from '../../src/http/app.ts';
import { tempDir } from '../_support/env.ts';
import { basic, fromLoopback, memoryInstance, memoryRegistry, recordingLogger, send } from './_support/app.ts';

interface Ctx {
  dir: string;
  logDir: string;
  cleanup: () => Promise<void>;
}
const ADMIN: AdminCredentials = { username: 'boss', password: 'admin-pw' };

function app(dir: string, opts: { admin?: AdminCredentials; loopback?: boolean } = {}) {
  const alpha = memoryInstance('alpha', { apiToken: 'tok', binariesDir: join(dir, 'binaries') });
  const beta = memoryInstance('beta', { apiToken: 'tok-b', binariesDir: join(dir, 'beta', 'binaries') });
  const app = createApp({
    registry: memoryRegistry(alpha, beta),
    bus: createBus(),
    log: recordingLogger(),
    version: '1',
    admin: () => opts.admin,
  });
  return opts.loopback ? fromLoopback(app) : app;
}

/** Reads NDJSON records until the stream ends or `timeoutMs` passes (then cancels). */
async function records(
  res: Response,
  onRecord: (r: Record<string, unknown>) => void = () => {},
  timeoutMs = 8000,
): Promise<Record<string, unknown>[]> {
  const got: Record<string, unknown>[] = [];
  const reader = res.body!.getReader();
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (text === '') continue;
        const r = JSON.parse(text) as Record<string, unknown>;
        got.push(r);
        onRecord(r);
      }
    }
  } finally {
    clearTimeout(timer);
  }
  return got;
}

const test = suite<Ctx>('log routes :: GET /instances/:key/logs', { dir: '', logDir: '', cleanup: async () => {} });
test.before.each(async (ctx) => {
  const t = await tempDir('wd-log-route-');
  ctx.dir = t.path;
  ctx.cleanup = t.cleanup;
  ctx.logDir = join(t.path, 'logs');
  mkdirSync(ctx.logDir);
  writeFileSync(join(ctx.logDir, 'server.log'), 'one\ntwo\nthree\n');
});
test.after.each((ctx) => ctx.cleanup());

test('log-routes :: the last N lines with the instance token; default 50; bad values → 400', async ({ dir }) => {
  const a = app(dir);
  const res = await send(a, 'GET', '/instances/alpha/logs?lines=2', basic('alpha', 'tok'));
  assert.is(res.status, 200);
  assert.equal(await res.json(), { key: 'alpha', found: true, lines: ['two', 'three'] });
  assert.equal(
    ((await (await send(a, 'GET', '/instances/alpha/logs', basic('alpha', 'tok'))).json()) as { lines: string[] })
      .lines,
    ['one', 'two', 'three'],
  );
  for (const q of ['lines=-1', 'lines=x', 'lines=1001', 'follow=1&seconds=0', 'follow=1&from=abc']) {
    assert.is((await send(a, 'GET', `/instances/alpha/logs?${q}`, basic('alpha', 'tok'))).status, 400, q);
  }
  assert.is((await send(a, 'POST', '/instances/alpha/logs', basic('alpha', 'tok'))).status, 405);
});

test('log-routes :: instance rule without Admin: no header 401, wrong token 401, other key 403, unknown 404', async ({
  dir,
}) => {
  const a = app(dir);
  const none = await send(a, 'GET', '/instances/alpha/logs');
  assert.is(none.status, 401);
  assert.ok(none.headers.get('www-authenticate'));
  assert.is((await send(a, 'GET', '/instances/alpha/logs', basic('alpha', 'nope'))).status, 401);
  assert.is((await send(a, 'GET', '/instances/alpha/logs', basic('beta', 'tok-b'))).status, 403);
  const ghost = await send(a, 'GET', '/instances/ghost/logs', basic('ghost', 'tok'));
  assert.is(ghost.status, 404);
  assert.not.ok('instances' in ((await ghost.json()) as object), 'an instance token does not learn the other keys');
});

test('log-routes :: Admin credentials read any instance; an unknown key lists the instances; a wrong password is 401', async ({
  dir,
}) => {
  const a = app(dir, { admin: ADMIN });
  const res = await send(a, 'GET', '/instances/alpha/logs?lines=1', basic('boss', 'admin-pw'));
  assert.is(res.status, 200);
  assert.equal(((await res.json()) as { lines: string[] }).lines, ['three']);
  const ghost = await send(a, 'GET', '/instances/ghost/logs', basic('boss', 'admin-pw'));
  assert.is(ghost.status, 404);
  assert.equal(await ghost.json(), { error: 'no instance ghost', instances: ['alpha', 'beta'] });
  const wrong = await send(a, 'GET', '/instances/alpha/logs', basic('boss', 'nope'));
  assert.is(wrong.status, 401);
  assert.match(wrong.headers.get('www-authenticate') ?? '', /watchdog admin/);
  assert.is(
    (await send(a, 'GET', '/instances/alpha/logs', basic('alpha', 'tok'))).status,
    200,
    'the instance token still works',
  );
});

test('log-routes :: a loopback client without Admin configured reads without credentials, like the dashboard', async ({
  dir,
}) => {
  const a = app(dir, { loopback: true });
  assert.is((await send(a, 'GET', '/instances/alpha/logs')).status, 200);
});

test('log-routes :: follow=1: the tail, new lines as they are written, then the end of its lifetime and where to resume', async ({
  dir,
  logDir,
}) => {
  const a = app(dir);
  const res = await send(a, 'GET', '/instances/alpha/logs?lines=1&follow=1&seconds=1', basic('alpha', 'tok'));
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', 'application/x-ndjson');
  const got = await records(res, (r) => {
    if (r.line === 'three') appendFileSync(join(logDir, 'server.log'), 'four\n');
  });
  assert.equal(got.slice(0, 3), [{ key: 'alpha', found: true }, { line: 'three' }, { line: 'four' }]);
  const end = got.at(-1)!;
  assert.equal(end, { end: 'lifetime', from: 'one\ntwo\nthree\nfour\n'.length });
  appendFileSync(join(logDir, 'server.log'), 'five\n');
  const resumed = await records(
    await send(a, 'GET', `/instances/alpha/logs?follow=1&seconds=1&from=${String(end.from)}`, basic('alpha', 'tok')),
  );
  assert.equal(resumed.map((r) => r.line).filter(Boolean), ['five'], 'nothing twice, nothing skipped');
});

test('log-routes :: HEAD with follow=1 answers the headers without following', async ({ dir }) => {
  const res = await send(app(dir), 'HEAD', '/instances/alpha/logs?follow=1', basic('alpha', 'tok'));
  assert.is(res.status, 200);
  assert.is(await res.text(), '');
});

test.run();
