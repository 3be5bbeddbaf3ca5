import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { fetchVerified, writeFileFrom, type FetchOptions } from '../../../src/updates/fetch/download.ts';
import { tempDir } from '../../_support/env.ts';
import { sampleBuild, writeZip } from '../../fixtures/archives/build.ts';
import { startCdn, type Cdn } from '../../fixtures/archives/serve.ts';

interface Ctx {
  cdn: Cdn;
  dir: string;
  cleanup: () => Promise<void>;
  archive: string;
  sha256: string;
}

const test = suite<Ctx>('download', {} as Ctx);

/** Into a file, as the zip path of archive/sink.ts does (prepareFromUrl removes that file whatever happens). */
const downloadVerified = (opts: FetchOptions & { dest: string }) =>
  fetchVerified(opts, (body, signal) => writeFileFrom(body, opts.dest, signal));

test.before.each(async (ctx) => {
  const tmp = await tempDir();
  ctx.dir = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.cdn = await startCdn();
  ctx.archive = join(tmp.path, 'src', 'SS14.Server_linux-x64.zip');
  await writeZip(ctx.archive, sampleBuild('A'));
  ctx.sha256 = createHash('sha256')
    .update(await readFile(ctx.archive))
    .digest('hex');
});

test.after.each(async (ctx) => {
  await ctx.cdn?.close();
  await ctx.cleanup?.();
});

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<UpdateError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, UpdateError);
    assert.match((err as Error).message, pattern);
    return err as UpdateError;
  }
  throw new Error(`expected a rejection matching ${pattern}`);
}

test('download :: streams to dest, verifies an upper-case hash, reports progress', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  const dest = join(ctx.dir, 'download.part');
  const progress: Array<[number, number | null]> = [];
  const result = await downloadVerified({
    url: ctx.cdn.url('/a.zip'),
    dest,
    sha256: ctx.sha256.toUpperCase(),
    timeoutMs: 5000,
    signal: new AbortController().signal,
    onProgress: (b, t) => progress.push([b, t]),
  });
  const size = (await stat(ctx.archive)).size;
  assert.is(result.bytes, size);
  assert.is(result.sha256, ctx.sha256);
  assert.equal(await readFile(dest), await readFile(ctx.archive));
  assert.equal(progress.at(-1), [size, size]);
});

test('download :: sends the given headers', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  await downloadVerified({
    url: ctx.cdn.url('/a.zip'),
    dest: join(ctx.dir, 'd.part'),
    timeoutMs: 5000,
    headers: { authorization: 'Basic dTpw' },
    signal: new AbortController().signal,
  });
  assert.is(ctx.cdn.requests.at(-1)?.headers.authorization, 'Basic dTpw');
});

test('download :: follows redirects; credentials go along within the origin, never to another one', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  ctx.cdn.set('/same', { kind: 'redirect', to: '/a.zip', status: 307 });
  const opts = {
    timeoutMs: 5000,
    sha256: ctx.sha256,
    headers: { authorization: 'Basic dTpw' },
    signal: new AbortController().signal,
  };
  await downloadVerified({ ...opts, url: ctx.cdn.url('/same'), dest: join(ctx.dir, 'same.part') });
  assert.equal(await readFile(join(ctx.dir, 'same.part')), await readFile(ctx.archive));
  assert.is(ctx.cdn.requests.at(-1)?.path, '/a.zip');
  assert.is(ctx.cdn.requests.at(-1)?.headers.authorization, 'Basic dTpw');

  // localhost and 127.0.0.1 are different origins on the same loopback server.
  const other = ctx.cdn.url('/a.zip').replace('127.0.0.1', 'localhost');
  ctx.cdn.set('/away', { kind: 'redirect', to: other });
  await downloadVerified({ ...opts, url: ctx.cdn.url('/away'), dest: join(ctx.dir, 'away.part') });
  assert.equal(await readFile(join(ctx.dir, 'away.part')), await readFile(ctx.archive));
  assert.is(ctx.cdn.requests.at(-2)?.headers.authorization, 'Basic dTpw');
  assert.is(ctx.cdn.requests.at(-1)?.headers.authorization, undefined);
});

test('download :: a redirect loop fails after 5 hops with a clear error', async (ctx) => {
  ctx.cdn.set('/loop', { kind: 'redirect', to: '/loop' });
  const before = ctx.cdn.requests.length;
  await rejects(
    downloadVerified({
      url: ctx.cdn.url('/loop'),
      dest: join(ctx.dir, 'd.part'),
      timeoutMs: 5000,
      signal: new AbortController().signal,
    }),
    /download of .*\/loop failed/,
  );
  assert.is(ctx.cdn.requests.length - before, 6);
});

test('download :: HTTP 500 fails and leaves no file', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'status', status: 500 });
  const dest = join(ctx.dir, 'd.part');
  await rejects(
    downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 5000, signal: new AbortController().signal }),
    /HTTP 500/,
  );
});

test('download :: a hash mismatch fails and removes the file', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  const dest = join(ctx.dir, 'd.part');
  await rejects(
    downloadVerified({
      url: ctx.cdn.url('/a.zip'),
      dest,
      sha256: '0'.repeat(64),
      timeoutMs: 5000,
      signal: new AbortController().signal,
    }),
    /does not match its expected SHA-256/,
  );
});

test('download :: an empty or malformed expected hash is refused before downloading', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  const dest = join(ctx.dir, 'd.part');
  const signal = new AbortController().signal;
  await rejects(
    downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, sha256: '', timeoutMs: 5000, signal }),
    /SHA-256 is empty/,
  );
  await rejects(
    downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, sha256: 'xyz', timeoutMs: 5000, signal }),
    /not 64 hex digits/,
  );
  assert.is(ctx.cdn.requests.length, 0);
});

test('download :: a body shorter than its Content-Length fails and removes the file', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'truncate', file: ctx.archive, sendBytes: 100 });
  const dest = join(ctx.dir, 'd.part');
  await rejects(
    downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 5000, signal: new AbortController().signal }),
    /cut short/,
  );
});

test('download :: a stalled body runs into the timeout', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'stall', file: ctx.archive, sendBytes: 100 });
  const dest = join(ctx.dir, 'd.part');
  const started = Date.now();
  await rejects(
    downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 300, signal: new AbortController().signal }),
    /did not finish within 0.3 s/,
  );
  assert.ok(Date.now() - started < 5000, 'the timeout stopped the stalled transfer');
});

test('download :: cancellation stops a transfer', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'stall', file: ctx.archive, sendBytes: 100 });
  const dest = join(ctx.dir, 'd.part');
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 150);
  await rejects(
    downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 30_000, signal: ac.signal }),
    /cancelled/,
  );
});

test('download :: a refused connection is an UpdateError', async (ctx) => {
  const url = ctx.cdn.url('/a.zip');
  await ctx.cdn.close();
  await rejects(
    downloadVerified({ url, dest: join(ctx.dir, 'd.part'), timeoutMs: 5000, signal: new AbortController().signal }),
    /failed/,
  );
});

test.run();
