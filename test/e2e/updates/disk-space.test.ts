import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse, stringify } from 'yaml';
import { type RunningDaemon, startDaemon, stopThenRelease } from '../../_support/daemon.ts';
import { idleRss, unharmedWhile } from '../../_support/daemon-watch.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { mountSmallFs, type SmallFs, tmpfsUnavailable } from '../../_support/tmpfs.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../_support/webhook.ts';
import { writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { type Cdn, type Route, startCdn } from '../../fixtures/archives/serve.ts';
import { type ManifestBuild, manifestDoc, serverBuildEntries } from '../../fixtures/builds/build.ts';
import {
  builtLabel,
  dataJson,
  manifestConfig,
  offerBuild,
  runningBuild,
  scratchLeft,
  serveBuildA,
  TOKEN,
} from '../_support/updates.ts';
import { chatFlushed } from '../resilience/_support/chat-marker.ts';
import { updateSettled } from './_support/update-settled.ts';

/**
 * Updates onto a small disk, through the real daemon: its instance root on a 16 MB tmpfs, build A from a
 * loopback CDN running. A build that does not fit is refused before staging with the figures; one whose declared
 * size fits but whose files fill the disk is "disk full", not a corrupt archive; a zip bomb stops at the cap. Each is
 * one update-failed chat message, and build A, its revision and its server (same pid) carry on.
 */

const MB = 1_000_000;
const KEY = 'u';
const MANIFEST = '/disk/manifest';
const unavailable = tmpfsUnavailable();
if (unavailable) console.log(`skipping the update disk-space e2e tests: ${unavailable}`);

interface Ctx {
  fs: SmallFs | null;
  cdn: Cdn | null;
  hook: WebhookReceiver | null;
  daemon: RunningDaemon | null;
  dir: string;
  port: number;
  good: ManifestBuild | null;
  cleanup: (() => Promise<void>) | null;
}

const s = suite<Ctx>('e2e updates :: a disk too small for the build', {
  fs: null,
  cdn: null,
  hook: null,
  daemon: null,
  dir: '',
  port: 0,
  good: null,
  cleanup: null,
});
const test = unavailable ? s.skip : s;

s.before(async (ctx) => {
  if (unavailable) return;
  try {
    const tmp = await tempDir('wd-e2e-upd-disk-');
    ctx.dir = tmp.path;
    ctx.cleanup = tmp.cleanup;
    ctx.fs = mountSmallFs(16 * MB);
    ctx.hook = await startWebhookReceiver();
    ctx.cdn = await startCdn();
    ctx.good = await serveBuildA(ctx.cdn, ctx.dir, MANIFEST);
    ctx.port = await freePort();
    const root = join(ctx.fs.path, 'instances');
    await mkdir(root);
    const config = parse(manifestConfig(KEY, ctx.port, ctx.cdn.url(MANIFEST), 10)) as {
      Servers: { InstanceRoot?: string; Instances: Record<string, { Updates: Record<string, unknown> }> };
      [k: string]: unknown;
    };
    config.Notification = { ChatWebhook: ctx.hook.url };
    // A low-disk notice is not what these tests are about: the threshold is far below anything they leave.
    config.Disk = { LowFreeMegabytes: 0.001, CheckSeconds: 60 };
    config.Servers.InstanceRoot = root;
    Object.assign(config.Servers.Instances[KEY]?.Updates ?? {}, {
      SpaceMarginMegabytes: 0.5,
      MaxUnpackedMegabytes: 50,
    });
    Object.assign(config.Servers.Instances[KEY] ?? {}, { Backups: { SpaceMarginMegabytes: 0 } });
    ctx.daemon = await startDaemon(stringify(config), { dir: ctx.dir });
    await runningBuild(ctx.daemon, KEY, ctx.port, 'A');
  } catch (err) {
    console.error(err);
    throw err;
  }
});

s.after((ctx) =>
  stopThenRelease(ctx.daemon, [
    () => ctx.fs?.unmount(),
    () => ctx.cdn?.close(),
    () => ctx.hook?.close(),
    () => ctx.cleanup?.(),
  ]),
);

s.after.each((ctx) => ctx.fs?.release());

let serial = 0;

/**
 * Offers `path` (or what `route` serves, of no valid hash) as the newest build, asks for an update, and returns the
 * update-failed chat message it caused.
 */
async function failedUpdate(
  ctx: Ctx,
  path: string | { route: Route },
  fill?: (archiveBytes: number) => number,
): Promise<string> {
  const d = ctx.daemon as RunningDaemon;
  const hook = ctx.hook as WebhookReceiver;
  const cdn = ctx.cdn as Cdn;
  const before = await runningBuild(d, KEY, ctx.port, 'A');
  const key = `build-C${++serial}`;
  const time = '2024-06-01T10:00:00Z';
  if (typeof path === 'string') {
    const route = `/files/C${serial}${path.endsWith('.tar.gz') ? '.tar.gz' : '.zip'}`;
    const c = await offerBuild(cdn, MANIFEST, ctx.good as ManifestBuild, { path, key, time, route });
    if (fill) (ctx.fs as SmallFs).fill(fill(c.size));
  } else {
    cdn.set(`/files/C${serial}`, path.route);
    const entry = { key, time, url: cdn.url(`/files/C${serial}`), sha256: 'F'.repeat(64) };
    cdn.set(MANIFEST, { kind: 'json', body: manifestDoc([ctx.good as ManifestBuild, entry]) });
  }
  const seen = hook.messages.length;
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  const failed = () => hook.messages.slice(seen).filter((m) => m.content.includes('could not install an update'));
  const message = await waitFor('an update-failed chat message', () => failed()[0], 20_000);
  // Settled: nothing may follow (a second message, a swap, a restart). The chat marker comes after any message.
  await updateSettled(d, KEY, Date.now());
  await chatFlushed(d, hook, KEY, TOKEN);
  assert.is(failed().length, 1, 'one update-failed message');
  const after = await runningBuild(d, KEY, ctx.port, 'A');
  assert.is(after.status.pid, before.status.pid, 'the running server was left alone');
  assert.is(after.status.revision, 'build-A');
  // The instance folders are on the small disk.
  const where = { dir: (ctx.fs as SmallFs).path };
  assert.is((await dataJson(where, KEY)).revision, 'build-A');
  assert.is(await builtLabel(where, KEY), 'A', 'bin/ still holds build A');
  assert.equal(await scratchLeft(where, KEY), [], 'no download or staging left behind');
  assert.match(d.log(), /update failed; the installed build keeps running/);
  return message.content;
}

/** The failure message of a build that does not fit on `fs`; `needs` and `has` match the whole MB figures. */
const notEnoughSpace = (fs: SmallFs, needs: string, has: string) =>
  new RegExp(
    `could not install an update \\(not enough disk space on ${fs.path}: needs ${needs}(\\.\\d)? MB, has ${has}(\\.\\d)? MB`,
  );

test('disk :: a build larger than the free space fails before staging, with the figures', async (ctx) => {
  const path = join(ctx.dir, 'C-big.zip');
  await writeZip(path, await serverBuildEntries('C', [{ name: 'big.bin', content: Buffer.alloc(12 * MB, 1) }]));
  const fs = ctx.fs as SmallFs;
  const message = await failedUpdate(ctx, path, () => 4 * MB);
  assert.match(message, notEnoughSpace(fs, '1[23]', '[34]'));
});

test('disk :: a tar.gz larger than the free space is summed before unpacking, not streamed into a full disk', async (ctx) => {
  const path = join(ctx.dir, 'C-big.tar.gz');
  // About 6 MB to download, 12 MB unpacked: the download fits, the build does not.
  const extra = [
    { name: 'random.bin', content: randomBytes(6 * MB) },
    { name: 'zeros.bin', content: Buffer.alloc(6 * MB) },
  ];
  await writeTar(path, await serverBuildEntries('C', extra), { gzip: true });
  const fs = ctx.fs as SmallFs;
  const message = await failedUpdate(ctx, path, () => 8 * MB);
  assert.match(message, notEnoughSpace(fs, '1[23]', '[12]'));
});

test('disk :: a disk filling up mid-extraction is "disk full", not a corrupt archive', async (ctx) => {
  const path = join(ctx.dir, 'C-many.zip');
  // 600 files of 2 kB declare 1.2 MB but take a 4 KiB page each on tmpfs (2.5 MB).
  const files = Array.from({ length: 600 }, (_, i) => ({ name: `many/${i}.txt`, content: Buffer.alloc(2000, i) }));
  await writeZip(path, await serverBuildEntries('C', files));
  // Room for the download and for what the archive declares with the 0.5 MB margin, not for what it takes.
  const message = await failedUpdate(ctx, path, (archive) => archive + 1.2 * MB + 0.5 * MB + 0.3 * MB);
  assert.match(
    message,
    new RegExp(
      `could not install an update \\(disk full on ${(ctx.fs as SmallFs).path} while writing the update \\(ENOSPC: no space left on device`,
    ),
  );
  assert.not.match(message, /corrupt/);
});

test('disk :: a zip bomb stops at the cap, with a clear message', async (ctx) => {
  const path = join(ctx.dir, 'C-bomb.zip');
  // Past the 50 MB cap and four times the disk, in a zip of some 64 KB.
  await writeZip(path, await serverBuildEntries('C', [{ name: 'zeros.bin', content: Buffer.alloc(64 * MB) }]));
  const message = await failedUpdate(ctx, path);
  assert.match(
    message,
    /the archive declares 64 MB unpacked, more than the 50 MB Updates\.MaxUnpackedMegabytes allows/,
  );
});

test('disk :: a download of unknown length without end stops at the free space less the margin, and is removed', async (ctx) => {
  const d = ctx.daemon as RunningDaemon;
  const fs = ctx.fs as SmallFs;
  const cdn = ctx.cdn as Cdn;
  const part = join(fs.path, 'instances', KEY, '.update', 'download.part');
  const cut = cdn.cutOff.length;
  let largestPart = 0;
  let leastFree = fs.free();
  let message = '';
  await unharmedWhile(d, await idleRss(d), async () => {
    const failing = failedUpdate(ctx, { route: { kind: 'endless', head: Buffer.from('PK\x03\x04') } });
    let settled = false;
    const over = () => {
      settled = true;
    };
    failing.then(over, over);
    // The part file as it grows, and the disk under it, until the update has failed.
    while (!settled) {
      largestPart = Math.max(largestPart, (await stat(part).catch(() => null))?.size ?? 0);
      leastFree = Math.min(leastFree, fs.free());
      await new Promise((r) => setTimeout(r, 20));
    }
    message = await failing;
  });
  const m =
    /the download of unknown length passed ([\d.]+) MB, all the free space \([\d.]+ MB\) less Updates\.SpaceMarginMegabytes leaves; it was stopped and removed/.exec(
      message,
    );
  assert.ok(m, message);
  const ceiling = Number(m?.[1]) * MB;
  assert.ok(ceiling > 4 * MB && ceiling < 16 * MB, `the ceiling is the free space less the margin (${ceiling})`);
  // The figure is rounded to whole MB past 10 MB.
  assert.ok(largestPart <= ceiling + MB, `the part file stopped at the ceiling (${largestPart} bytes seen)`);
  assert.ok(leastFree >= 0.25 * MB, `the disk never filled (${leastFree} bytes free at the least)`);
  const sent = await waitFor('the CDN to see the daemon hang up', () => cdn.cutOff[cut], 10_000);
  assert.ok(
    sent >= ceiling - MB && sent < ceiling + 32 * MB,
    `the transfer stopped near the ceiling (${sent} bytes sent)`,
  );
});

test('disk :: a disk that fills during the snapshot before the install fails the update; build A runs on', async (ctx) => {
  const d = ctx.daemon as RunningDaemon;
  const hook = ctx.hook as WebhookReceiver;
  const fs = ctx.fs as SmallFs;
  const inst = join(fs.path, 'instances', KEY);
  // 400 files of 3 000 random bytes: listed as 1.2 MB, twice that is what the snapshot checks for, but each copy
  // takes a whole 4 KiB page, so the disk fills while the snapshot is taken.
  await mkdir(join(inst, 'data', 'saves'), { recursive: true });
  for (let i = 0; i < 400; i++) await writeFile(join(inst, 'data', 'saves', `slot-${i}.bin`), randomBytes(3_000));
  try {
    const path = join(ctx.dir, 'C-snap.zip');
    await writeZip(path, await serverBuildEntries('C'));
    const before = await runningBuild(d, KEY, ctx.port, 'A');
    await offerBuild(ctx.cdn as Cdn, MANIFEST, ctx.good as ManifestBuild, {
      path,
      key: `build-C${++serial}`,
      time: '2024-06-01T10:00:00Z',
      route: `/files/C${serial}.zip`,
    });
    fs.fill(2 * 400 * 3_000 + 300_000);
    const seen = hook.messages.length;
    assert.is(await d.control(KEY, TOKEN, 'update'), 200);
    const failed = () => hook.messages.slice(seen).filter((m) => m.content.includes('could not install an update'));
    const message = await waitFor('an update-failed chat message', () => failed()[0], 30_000);
    assert.match(
      message.content,
      /could not install an update requested with its API token from 127\.0\.0\.1 \(not installed, the snapshot before it failed: the disk filled while taking a snapshot of u \(ENOSPC\); nothing was kept/,
    );
    const after = await runningBuild(d, KEY, ctx.port, 'A', { notPid: before.status.pid });
    assert.is(after.status.revision, 'build-A', 'the installed build runs on');
    assert.is(await builtLabel({ dir: fs.path }, KEY), 'A', 'bin/ still holds build A');
    assert.equal(await readdir(join(inst, 'backups')), [], 'no snapshot, staging or partial archive left');
    const { backup } = (await d.status(KEY, TOKEN)) as unknown as {
      backup: { ok: boolean; kind: string; error: string };
    };
    assert.equal([backup.ok, backup.kind], [false, 'before-update'], 'the status shows the failed snapshot');
    assert.match(backup.error, /the disk filled/);
  } finally {
    await rm(join(inst, 'data', 'saves'), { recursive: true, force: true });
  }
});

s.run();
