import { pbkdf2, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { archiveSink } from '../../../src/updates/archive/sink.ts';
import { within } from '../../_support/env.ts';
import { sampleBuild, writeTar } from '../../fixtures/archives/build.ts';

/**
 * Found by the soak (bench/soak, seed 15001: a CDN cutting a tar.gz short while other instances were updating):
 * the download failed before the extractor had attached to its input, the input was destroyed with that error,
 * nobody listened for it yet, and the 'error' event crashed the daemon. The sink must reject with the body's
 * error, promptly (the extractor must not wait for an input that will never end), and nothing may escape.
 */

/** Keeps libuv's threadpool (4 threads) busy, as a loaded daemon's is: the extractor's first file call waits. */
function busyThreadpool(): Promise<unknown> {
  const one = () => new Promise((r) => pbkdf2('x', 'y', 400_000, 32, 'sha256', r));
  return Promise.all([one(), one(), one(), one()]);
}

/** The first `bytes` of `data`, then a failure as a reset connection gives. */
function cutShort(data: Buffer, bytes: number): Readable {
  return Readable.from(
    (async function* () {
      yield data.subarray(0, bytes);
      await new Promise((r) => setTimeout(r, 5)); // the fixture's behaviour: the connection fails a moment later
      throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    })(),
  );
}

test('sink :: a tar.gz download that fails before the extractor starts: the sink rejects with its error, nothing escapes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'wd-sink-'));
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    // Larger than the 512-byte head the sink reads to tell the format, so the extraction path is taken.
    const entries = [...sampleBuild('A'), { name: 'big.bin', content: randomBytes(4000) }];
    await writeTar(join(dir, 'a.tar.gz'), entries, { gzip: true });
    const data = await readFile(join(dir, 'a.tar.gz'));
    await mkdir(join(dir, 'staged'));
    const { sink } = archiveSink(join(dir, 'archive'), join(dir, 'staged'));
    const busy = busyThreadpool();
    // A signal nobody aborts: only the sink's own handling can end the extraction, else it never settles (the
    // 60 s bound only catches that hang; the busy thread pool delays it on a loaded machine).
    const err = await within(
      60_000,
      'the sink of a failed download',
      sink(cutShort(data, 1200), new AbortController().signal, null).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    assert.instance(err, Error);
    assert.is((err as Error).message, 'aborted', "the body's own error");
    await busy;
    // A stream's error event goes out on process.nextTick after its destroy(): a later turn of the loop comes after.
    await new Promise((r) => setImmediate(r));
    assert.equal(
      uncaught.map((e) => String(e)),
      [],
      'no unhandled error event',
    );
  } finally {
    process.off('uncaughtException', onUncaught);
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
