import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type FetchOptions, fetchVerified, writeFileFrom } from '../../../src/updates/fetch/download.ts';
import { waitFor, within } from '../../_support/env.ts';
import { sampleBuild, writeZip } from '../../fixtures/archives/build.ts';
import { cdnSuite, never, rejects, sha256Of } from '../_support/instance-suite.ts';

/** Into a file, as the zip path of archive/sink.ts does (prepareFromUrl removes that file whatever happens). */
const downloadVerified = (opts: FetchOptions & { dest: string }) =>
  fetchVerified(opts, (body, signal) => writeFileFrom(body, opts.dest, signal));

const test = cdnSuite('download', {
  instance: 'none',
  ctx: { archive: '', sha256: '' },
  before: async (ctx) => {
    ctx.archive = join(ctx.dir, 'src', 'SS14.Server_linux-x64.zip');
    await writeZip(ctx.archive, sampleBuild('A'));
    ctx.sha256 = await sha256Of(ctx.archive);
  },
});

test('download :: streams to dest, verifies an upper-case hash, reports progress', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  const dest = join(ctx.dir, 'download.part');
  const progress: Array<[number, number | null]> = [];
  const result = await downloadVerified({
    url: ctx.cdn.url('/a.zip'),
    dest,
    sha256: ctx.sha256.toUpperCase(),
    timeoutMs: 5000,
    signal: never(),
    onProgress: (b, t) => progress.push([b, t]),
  });
  const size = (await stat(ctx.archive)).size;
  assert.is(result.bytes, size);
  assert.is(result.sha256, ctx.sha256);
  assert.equal(await readFile(dest), await readFile(ctx.archive));
  assert.equal(progress.at(-1), [size, size]);
});

test('download :: a named pipe planted at dest is removed, never opened', async (ctx) => {
  if (spawnSync('mkfifo', ['--version']).error !== undefined) return console.log('  (skipped: no mkfifo)');
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  const dest = join(ctx.dir, 'planted.part');
  spawnSync('mkfifo', [dest]);
  try {
    const download = downloadVerified({
      url: ctx.cdn.url('/a.zip'),
      dest,
      sha256: ctx.sha256,
      timeoutMs: 5000,
      signal: never(),
    });
    await within(10_000, 'the download beside a planted pipe', download);
    assert.ok((await stat(dest)).isFile());
    assert.equal(await readFile(dest), await readFile(ctx.archive));
  } finally {
    // Were the pipe opened for writing, a reader lets that thread go, so the file can end.
    if ((await stat(dest).catch(() => null))?.isFIFO())
      closeSync(openSync(dest, constants.O_RDONLY | constants.O_NONBLOCK));
  }
});

test('download :: sends the given headers', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  await downloadVerified({
    url: ctx.cdn.url('/a.zip'),
    dest: join(ctx.dir, 'd.part'),
    timeoutMs: 5000,
    headers: { authorization: 'Basic dTpw' },
    signal: never(),
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
    signal: never(),
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

test('download :: a redirect loop fails after 5 hops with a clear error, without the signed query', async (ctx) => {
  ctx.cdn.set('/loop', { kind: 'redirect', to: '/loop?sig=SECRET' });
  const before = ctx.cdn.requests.length;
  const err = await rejects(
    downloadVerified({
      url: ctx.cdn.url('/loop'),
      dest: join(ctx.dir, 'd.part'),
      timeoutMs: 5000,
      signal: never(),
    }),
    /download of .*\/loop failed: more than 5 redirects, the last to http:\/\/127\.0\.0\.1:\d+\/loop$/,
  );
  assert.not.match(err.message, /SECRET/);
  assert.is(ctx.cdn.requests.length - before, 6);
});

test('download :: HTTP 500 fails and leaves no file', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'status', status: 500 });
  const dest = join(ctx.dir, 'd.part');
  await rejects(downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 5000, signal: never() }), /HTTP 500/);
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
      signal: never(),
    }),
    /does not match its expected SHA-256/,
  );
});

test('download :: an empty or malformed expected hash is refused before downloading', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'file', file: ctx.archive });
  const dest = join(ctx.dir, 'd.part');
  const signal = never();
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
  await rejects(downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 5000, signal: never() }), /cut short/);
});

test('download :: a stalled body runs into the timeout', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'stall', file: ctx.archive, sendBytes: 100 });
  const dest = join(ctx.dir, 'd.part');
  // The body never ends by itself: only the timeout ends it (10 s catches a timeout that never fires).
  await within(
    10_000,
    'a stalled download',
    rejects(
      downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 300, signal: never() }),
      /did not finish within 0.3 s/,
    ),
  );
});

test('download :: cancellation stops a transfer', async (ctx) => {
  ctx.cdn.set('/a.zip', { kind: 'stall', file: ctx.archive, sendBytes: 100 });
  const dest = join(ctx.dir, 'd.part');
  const ac = new AbortController();
  const done = downloadVerified({ url: ctx.cdn.url('/a.zip'), dest, timeoutMs: 30_000, signal: ac.signal });
  await waitFor('the transfer to have begun', () => ctx.cdn.requests.some((r) => r.path === '/a.zip'), 10_000);
  ac.abort();
  await rejects(done, /cancelled/);
});

test('download :: a refused connection is an UpdateError', async (ctx) => {
  const url = ctx.cdn.url('/a.zip');
  await ctx.cdn.close();
  await rejects(downloadVerified({ url, dest: join(ctx.dir, 'd.part'), timeoutMs: 5000, signal: never() }), /failed/);
});

test.run();
