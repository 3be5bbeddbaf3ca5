import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createManifestProvider } from '../../src/updates/manifest.ts';
import { tempDir } from '../_support/env.ts';
import { writeLargeZip } from '../fixtures/archives/build.ts';
import { providerContext } from '../fixtures/git/context.ts';
import { startCdn } from '../fixtures/archives/serve.ts';

const MB = 1024 * 1024;
const SIZE = 30 * MB;

/**
 * A collector callable from here although the runner does not pass --expose-gc. Garbage that V8 has not yet
 * collected would otherwise dominate the figures (measured: ~32 MB of dead 64 KB chunks between collections).
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const test = suite('install memory');

test('install memory :: a 30 MB build streams through download, hash and extraction with flat memory', async () => {
  const tmp = await tempDir();
  const cdn = await startCdn();
  try {
    const archive = join(tmp.path, 'SS14.Server_linux-x64.zip');
    await writeLargeZip(archive, SIZE);
    const hash = createHash('sha256');
    await pipeline(createReadStream(archive), hash);
    cdn.set('/big.zip', { kind: 'file', file: archive });
    cdn.set('/manifest.json', {
      kind: 'json',
      body: { builds: { big: { time: '2024-01-01T00:00:00Z', server: { 'linux-x64': { url: cdn.url('/big.zip'), sha256: hash.digest('hex') } } } } },
    });
    const inst = join(tmp.path, 'inst');
    await mkdir(inst);
    const p = createManifestProvider(providerContext({
      dir: inst,
      settings: { UpdateType: 'Manifest', Updates: { ManifestUrl: cdn.url('/manifest.json'), Platform: 'linux-x64', DownloadTimeoutSeconds: 60 } },
    }));
    await p.check(null, new AbortController().signal); // loads fetch's parser before the baseline

    gc();
    const base = process.memoryUsage();
    const peak = { rss: 0, live: 0 };
    const sample = () => {
      gc();
      const now = process.memoryUsage();
      peak.rss = Math.max(peak.rss, now.rss - base.rss);
      // Live JS heap plus Buffers: what a whole-archive buffer would show up in.
      peak.live = Math.max(peak.live, now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers);
    };
    const sampler = setInterval(sample, 20);
    try {
      assert.is(await p.apply(null, new AbortController().signal), 'big');
    } finally {
      clearInterval(sampler);
    }
    sample();
    assert.is((await stat(join(inst, 'bin', 'payload.bin'))).size, SIZE);
    const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
    assert.ok(peak.live < 16 * MB, `live heap + buffers grew by ${mb(peak.live)} while installing a 30 MB build`);
    assert.ok(peak.rss < 40 * MB, `RSS grew by ${mb(peak.rss)} while installing a 30 MB build`);
  } finally {
    await cdn.close();
    await tmp.cleanup();
  }
});

test.run();
