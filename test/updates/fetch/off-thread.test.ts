import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as assert from 'uvu/assert';
import type { ArchiveJob } from '../../../src/updates/fetch/archive-job.ts';
import { fetchArchiveOffThread, workerSource } from '../../../src/updates/fetch/off-thread.ts';
import { DEFAULT_LIMITS } from '../../../src/updates/install/disk-guard.ts';
import { waitFor } from '../../_support/env.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { cdnSuite, exists, never, rejects, sha256Of } from '../_support/instance-suite.ts';

const test = cdnSuite('off-thread', { instance: 'none' });

/** Threads of this process: a worker is one while it runs. */
const threads = () => readdirSync('/proc/self/task').length;

const PAD = randomBytes(1_200_000).toString('base64');
const build = (label: string) => [...sampleBuild(label), { name: 'pad.bin', content: PAD }];

async function job(dir: string, url: string, sha256?: string): Promise<ArchiveJob> {
  const staging = join(dir, 'staging');
  await mkdir(staging);
  return {
    download: { url, sha256, timeoutMs: 10_000 },
    archive: join(dir, 'download.part'),
    staging,
    limits: DEFAULT_LIMITS,
  };
}

function recorder() {
  const seen: string[] = [];
  return {
    seen,
    events: {
      onProgress: () => void (seen.at(-1) !== 'progress' && seen.push('progress')),
      onDownloaded: (bytes: number, extracted: boolean) => void seen.push(`downloaded ${bytes} ${extracted}`),
    },
  };
}

test('off-thread :: a tar.gz is staged by the worker as it downloads, and said so', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(archive, build('T'), { gzip: true });
  ctx.cdn.set('/b.tar.gz', { kind: 'file', file: archive });
  const j = await job(ctx.dir, ctx.cdn.url('/b.tar.gz'), await sha256Of(archive));
  const r = recorder();
  await fetchArchiveOffThread(j, never(), r.events);
  const size = (await stat(archive)).size;
  assert.equal(r.seen, ['progress', `downloaded ${size} true`]);
  assert.is(await readFile(join(j.staging, 'build.txt'), 'utf8'), 'T');
  assert.is(await readFile(join(j.staging, 'pad.bin'), 'utf8'), PAD);
  assert.is((await stat(join(j.staging, 'Robust.Server'))).mode & 0o777, 0o644);
  assert.not.ok(await exists(j.archive), 'a streamed tar leaves no copy');
});

test('off-thread :: a zip is saved, then extracted by the worker, and the saved copy removed', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, build('Z'));
  ctx.cdn.set('/b.zip', { kind: 'file', file: archive });
  const j = await job(ctx.dir, ctx.cdn.url('/b.zip'), await sha256Of(archive));
  const r = recorder();
  await fetchArchiveOffThread(j, never(), r.events);
  assert.equal(r.seen, ['progress', `downloaded ${(await stat(archive)).size} false`]);
  assert.is(await readFile(join(j.staging, 'Resources', 'data.txt'), 'utf8'), 'data of Z');
  assert.not.ok(await exists(j.archive));
});

test("off-thread :: the worker's failure arrives as the daemon's own error", async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(archive, build('T'), { gzip: true });
  ctx.cdn.set('/b.tar.gz', { kind: 'file', file: archive });
  const j = await job(ctx.dir, ctx.cdn.url('/b.tar.gz'), 'ab'.repeat(32));
  const err = await rejects(
    fetchArchiveOffThread(j, never(), recorder().events),
    /does not match its expected SHA-256/,
  );
  assert.match(err.stack ?? '', /download/, "the worker's stack is kept");
});

test('off-thread :: cancelled mid-download, it settles once the worker has stopped writing', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(archive, build('T'), { gzip: true });
  ctx.cdn.set('/b.tar.gz', { kind: 'stall', file: archive, sendBytes: 700_000 });
  const j = await job(ctx.dir, ctx.cdn.url('/b.tar.gz'));
  const ac = new AbortController();
  const r = recorder();
  const before = threads();
  const done = fetchArchiveOffThread(j, ac.signal, r.events);
  // Cancelled once the first 700 kB are being extracted (the worker takes a moment to start).
  await waitFor('the stalled download to start extracting', async () => (await readdir(j.staging)).length > 0, 10_000);
  ac.abort();
  await rejects(done, /cancelled/);
  // The worker's thread is what writes (and Node ends a thread only once its file requests are done): it is gone.
  assert.is(threads(), before, 'the worker had exited when it settled');
  await rejects(fetchArchiveOffThread(j, ac.signal, r.events), /cancelled/);
});

test('off-thread :: a listener that throws ends the update, not the daemon', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(archive, build('T'), { gzip: true });
  ctx.cdn.set('/b.tar.gz', { kind: 'file', file: archive });
  const j = await job(ctx.dir, ctx.cdn.url('/b.tar.gz'));
  const events = {
    onProgress: () => {
      throw new Error('listener broke');
    },
    onDownloaded: () => {},
  };
  const err = await rejects(fetchArchiveOffThread(j, never(), events), /reporting the download failed/);
  assert.match(String((err.cause as Error).message), /listener broke/);
});

/** A worker that is not ours: `code` runs as the worker's module. */
const misbehaving = (code: string) => ({ worker: { code, eval: true as const } });

test('off-thread :: a worker that fails to load is told as the update worker failing', async (ctx) => {
  const j = await job(ctx.dir, ctx.cdn.url('/none'));
  const err = await rejects(
    fetchArchiveOffThread(j, never(), recorder().events, misbehaving("throw new Error('no module here')")),
    /the update worker failed: no module here/,
  );
  assert.match(String((err.cause as Error).message), /no module here/);
});

test('off-thread :: a worker that ends without an answer is told with its exit code', async (ctx) => {
  const j = await job(ctx.dir, ctx.cdn.url('/none'));
  await rejects(
    fetchArchiveOffThread(j, never(), recorder().events, misbehaving('process.exit(3)')),
    /the update worker stopped \(exit code 3\) before the build was staged/,
  );
});

test('off-thread :: a worker that ignores a cancel is terminated after the grace', async (ctx) => {
  const j = await job(ctx.dir, ctx.cdn.url('/none'));
  const ac = new AbortController();
  // Never reads its messages, so only terminate() ends it; counts out loud (progress n) every 10 ms meanwhile.
  const deaf = {
    ...misbehaving(
      "const { parentPort } = require('node:worker_threads'); let n = 0;" +
        " setInterval(() => parentPort.postMessage({ type: 'progress', bytes: ++n, total: null }), 10);",
    ),
    cancelGraceMs: 1000,
  };
  let counted = 0;
  const events = {
    onProgress: (n: number) => {
      counted = n;
    },
    onDownloaded: () => {},
  };
  const done = fetchArchiveOffThread(j, ac.signal, events, deaf);
  await waitFor('the worker to run', () => counted > 0, 10_000);
  const atCancel = counted;
  ac.abort(new Error('the operator stopped it'));
  const err = await rejects(done, /the download was cancelled/);
  // Terminated at once, it could not have counted on for a few more ticks after the cancel was sent.
  assert.ok(
    counted >= atCancel + 3,
    `it ran on until the grace ended (${atCancel} at the cancel, ${counted} at the end)`,
  );
  assert.match(String((err.cause as Error).message), /the operator stopped it/);
});

test('off-thread :: a dist/ without the worker says so and what to do', async (ctx) => {
  const here = pathToFileURL(join(ctx.dir, 'off-thread.js')).href;
  await rejects(
    () => workerSource(here),
    /update worker .*archive-worker\.js is missing: dist\/ is incomplete; run `npm run build`/,
  );
});

test.run();
