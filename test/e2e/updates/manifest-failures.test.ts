import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { DownloadProgress, UpdateCheckStatus } from '../../../src/supervisor/status.ts';
import { runMain } from '../../_support/cli.ts';
import { type DaemonCtx, daemonSuite } from '../../_support/daemon.ts';
import { idleRss, unharmedWhile } from '../../_support/daemon-watch.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { metricValue } from '../../_support/metric-value.ts';
import { writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { type Cdn, type Route, startCdn } from '../../fixtures/archives/serve.ts';
import {
  describeArchive,
  type ManifestBuild,
  manifestDoc,
  serverBuildEntries,
  writeServerBuild,
} from '../../fixtures/builds/build.ts';
import {
  builtLabel,
  dataJson,
  logSince,
  manifestConfig,
  runningBuild,
  scratchLeft,
  serveBuildA,
  TOKEN,
} from '../_support/updates.ts';
import { updateSettled } from './_support/update-settled.ts';

/**
 * Failed updates through the real daemon: one daemon runs build A from a loopback CDN; for
 * each case the CDN switches its answer to a broken build C and the test asks for an update. Each failure must be
 * logged with its reason and leave bin/, the revision and the running server (same pid) as they were.
 */

const KEY = 'f';
/**
 * Updates.DownloadTimeoutSeconds: long enough for a small build from the loopback CDN on a loaded machine (1 s was
 * not), short enough for the stall tests, which wait it out.
 */
const DOWNLOAD_TIMEOUT_S = 5;
const STALLED = new RegExp(`did not finish within ${DOWNLOAD_TIMEOUT_S} s`);
const MANIFEST = '/fork/test/manifest';

/** The CDN, build A's manifest entry, and the instance's ApiPort. */
interface Cdned {
  cdn: Cdn;
  port: number;
  good: ManifestBuild;
}
type Ctx = DaemonCtx & Cdned;

const test = daemonSuite<Cdned>('e2e updates :: failed manifest updates change nothing', {
  ctx: {} as Cdned,
  config: async (ctx) => {
    ctx.cdn = await startCdn();
    ctx.good = await serveBuildA(ctx.cdn, ctx.dir, MANIFEST);
    ctx.port = await freePort();
    return manifestConfig(KEY, ctx.port, ctx.cdn.url(MANIFEST), DOWNLOAD_TIMEOUT_S);
  },
  before: (ctx) => runningBuild(ctx.daemon!, KEY, ctx.port, 'A'),
  after: (ctx) => ctx.cdn?.close(),
});

let serial = 0;

/** Offers a newer build C served by `route` (its manifest hash `sha256`), and the manifest as `manifest` if given. */
async function offer(
  ctx: Ctx,
  opts: { route?: Route; sha256?: string; platform?: string; manifest?: Route },
): Promise<string> {
  const key = `build-C${++serial}`;
  const path = `/files/C${serial}.bin`;
  if (opts.route) ctx.cdn.set(path, opts.route);
  const c: ManifestBuild = {
    key,
    time: `2024-06-0${(serial % 9) + 1}T10:00:00Z`,
    url: ctx.cdn.url(path),
    sha256: opts.sha256 ?? 'F'.repeat(64),
    platform: opts.platform,
  };
  ctx.cdn.set(MANIFEST, opts.manifest ?? { kind: 'json', body: manifestDoc([ctx.good, c]) });
  return key;
}

/** Offers the archive at `path` as build C, its manifest hash the archive's own. */
async function offerArchive(ctx: Ctx, path: string): Promise<void> {
  const c = await describeArchive(path);
  await offer(ctx, { route: { kind: 'file', file: c.path }, sha256: c.sha256 });
}

/** Asks for an update, waits for the log to give `why`, then checks that nothing changed. */
async function refusedUpdate(ctx: Ctx, why: RegExp): Promise<void> {
  const d = ctx.daemon!;
  const before = await runningBuild(d, KEY, ctx.port, 'A');
  const from = d.log().length;
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  const line = await waitFor(
    `a log line matching ${why}`,
    () =>
      logSince(d, from)
        .split('\n')
        .find((l) => why.test(l)),
    15_000,
  );
  assert.match(line, /update (check )?failed/, 'the log says the update failed');
  // Settled: nothing may follow (a late /update, a swap, a restart).
  await updateSettled(d, KEY, Date.now());
  const after = await runningBuild(d, KEY, ctx.port, 'A');
  assert.is(after.status.pid, before.status.pid, `the running server was left alone\n${logSince(d, from)}`);
  assert.not.match(logSince(d, from), /update requested/, 'the server was not asked to leave');
  assert.is(after.status.revision, 'build-A');
  assert.is((await dataJson(d, KEY)).revision, 'build-A');
  assert.is(await builtLabel(d, KEY), 'A', 'bin/ still holds build A');
  assert.equal(await scratchLeft(d, KEY), [], 'no download or staging left behind');
}

test('manifest-failures :: manifest answers HTTP 500', async (ctx) => {
  await offer(ctx, { manifest: { kind: 'status', status: 500 } });
  await refusedUpdate(ctx, /manifest at http:\/\/127\.0\.0\.1:\d+\/fork\/test\/manifest answered HTTP 500/);
});

test('manifest-failures :: a failed check is a failed outcome, not "no update": --wait, status, the table, /metrics', async (ctx) => {
  const d = ctx.daemon!;
  const ep = ['--url', d.url, '--token', TOKEN];
  ctx.cdn.set(MANIFEST, { kind: 'status', status: 503 });
  const failed = await runMain(['update', KEY, '--wait', ...ep], { cwd: ctx.dir });
  assert.is(failed.code, 1, failed.stdout);
  assert.match(failed.stdout, /update of f failed: the update check failed: the manifest at \S+ answered HTTP 503/);
  const s = (await d.status(KEY, TOKEN)) as unknown as { updateCheck: UpdateCheckStatus };
  assert.is(s.updateCheck.result, 'failed');
  assert.match(s.updateCheck.error ?? '', 'answered HTTP 503');
  assert.ok(s.updateCheck.failingSince !== null, 'failing since');
  const table = await runMain(['status', KEY, ...ep], { cwd: ctx.dir });
  assert.match(table.stdout, `f update checks failing since ${s.updateCheck.failingSince}`);
  assert.ok(
    ((await metricValue(d.url, 'watchdog_update_checks_total', { instance: KEY, result: 'failed' })) ?? 0) >= 1,
  );

  // The CDN answers again: the next check works, says so, and the failing run is over.
  ctx.cdn.set(MANIFEST, { kind: 'json', body: manifestDoc([ctx.good]) });
  const none = await runMain(['update', KEY, '--wait', ...ep], { cwd: ctx.dir });
  assert.is(none.code, 0, none.stdout);
  assert.match(none.stdout, 'no update available');
  const ok = (await d.status(KEY, TOKEN)) as unknown as { updateCheck: UpdateCheckStatus };
  assert.equal([ok.updateCheck.result, ok.updateCheck.failingSince], ['none', null]);
  assert.ok(
    ((await metricValue(d.url, 'watchdog_update_check_last_success_timestamp_seconds', { instance: KEY })) ?? 0) > 0,
  );
});

test('manifest-failures :: an endless manifest stops at Updates.MaxManifestMegabytes; the daemon stays small', async (ctx) => {
  const d = ctx.daemon!;
  const idle = await idleRss(d);
  const cut = ctx.cdn.cutOff.length;
  await unharmedWhile(d, idle, async () => {
    await offer(ctx, { manifest: { kind: 'endless', head: Buffer.from('{"builds": {"') } });
    await refusedUpdate(
      ctx,
      /the manifest at \S+ passed 32 MB, the most it may be; .*raise Updates\.MaxManifestMegabytes if it really is that large/,
    );
  });
  const bytes = await waitFor('the CDN to see the daemon hang up', () => ctx.cdn.cutOff[cut], 10_000);
  assert.ok(bytes < 64 * 1_000_000, `the manifest was cut off after ${bytes} bytes`);
});

test('manifest-failures :: manifest is not JSON', async (ctx) => {
  await offer(ctx, { manifest: { kind: 'text', body: '<html>502 Bad Gateway</html>', type: 'text/html' } });
  await refusedUpdate(ctx, /is not JSON \(it starts with/);
});

test('manifest-failures :: no build for this platform', async (ctx) => {
  const c = await describeArchive(join(ctx.dir, 'A.zip'));
  await offer(ctx, { route: { kind: 'file', file: c.path }, sha256: c.sha256, platform: 'win-x64' });
  await refusedUpdate(ctx, /no server archive for this platform linux-x64 .*it offers win-x64/);
});

test('manifest-failures :: hash mismatch', async (ctx) => {
  const c = await writeServerBuild(join(ctx.dir, 'C-hash.zip'), 'C');
  await offer(ctx, { route: { kind: 'file', file: c.path }, sha256: '0'.repeat(64) });
  await refusedUpdate(ctx, /does not match its expected SHA-256/);
});

test('manifest-failures :: truncated download', async (ctx) => {
  const c = await writeServerBuild(join(ctx.dir, 'C-trunc.zip'), 'C', {
    extra: [{ name: 'pad.bin', content: 'p'.repeat(50_000), store: true }],
  });
  await offer(ctx, { route: { kind: 'truncate', file: c.path, sendBytes: 4000 }, sha256: c.sha256 });
  await refusedUpdate(ctx, /cut short: got 4000 of \d+ bytes/);
});

test(`manifest-failures :: download stalls past Updates.DownloadTimeoutSeconds (${DOWNLOAD_TIMEOUT_S} s)`, async (ctx) => {
  const c = await writeServerBuild(join(ctx.dir, 'C-stall.zip'), 'C');
  await offer(ctx, { route: { kind: 'stall', file: c.path, sendBytes: 100 }, sha256: c.sha256 });
  await refusedUpdate(ctx, STALLED);
});

test('manifest-failures :: a running download is in the status (bytes, total, since) and gone once it ends', async (ctx) => {
  const d = ctx.daemon!;
  const c = await writeServerBuild(join(ctx.dir, 'C-progress.zip'), 'C');
  await offer(ctx, { route: { kind: 'stall', file: c.path, sendBytes: 100 }, sha256: c.sha256 });
  const from = d.log().length;
  assert.is(await d.control(KEY, TOKEN, 'update'), 200);
  type WithDownload = { download: DownloadProgress | null };
  const seen = await waitFor(
    'the download in the status',
    async () => {
      const download = ((await d.status(KEY, TOKEN)) as unknown as WithDownload).download;
      return download && download.bytes > 0 ? download : undefined;
    },
    15_000,
    50,
  );
  assert.is(seen.bytes, 100);
  assert.is(seen.total, (await stat(c.path)).size);
  assert.ok(Date.parse(seen.since) <= Date.now());
  await waitFor('the stall to fail the update', () => STALLED.test(logSince(d, from)), 15_000);
  await waitFor(
    'the download gone from the status',
    async () => ((await d.status(KEY, TOKEN)) as unknown as WithDownload).download === null,
    5_000,
  );
});

test('manifest-failures :: corrupt archive (hash matches)', async (ctx) => {
  const path = join(ctx.dir, 'C-corrupt.zip');
  await writeFile(path, Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(4000, 7)]));
  await offerArchive(ctx, path);
  await refusedUpdate(ctx, /corrupt/);
});

const ESCAPING_LINK =
  /refused archive entry \\?"Resources\/etc\\?": it is a link to \\?"\.\.\/\.\.\/\.\.\/\.\.\/\.\.\/etc\\?", outside the folder/;

// Archives whose hash matches the manifest but whose entries would land outside bin/: refused while unpacking.
for (const { what, file, entry, rename, why } of [
  {
    what: 'zip entry with ../',
    file: 'C-dotdot.zip',
    entry: { name: 'xx/evil.txt', content: 'evil' },
    rename: { 'xx/evil.txt': '../evil.txt' },
    why: /refused archive entry \\?"\.\.\/evil\.txt\\?"/,
  },
  {
    what: 'zip entry with an absolute path',
    file: 'C-abs.zip',
    entry: { name: 'xtmp/evil.txt', content: 'evil' },
    rename: { 'xtmp/evil.txt': '/tmp/evil.txt' },
    why: /refused archive entry \\?"\/tmp\/evil\.txt\\?": absolute path/,
  },
  {
    what: 'zip link escaping the folder',
    file: 'C-link.zip',
    entry: { name: 'Resources/etc', symlinkTo: '../../../../../etc' },
    rename: {},
    why: ESCAPING_LINK,
  },
  {
    what: 'tar.gz link escaping the folder',
    file: 'C-link.tar.gz',
    entry: { name: 'Resources/etc', symlinkTo: '../../../../../etc' },
    rename: {},
    why: ESCAPING_LINK,
  },
]) {
  test(`manifest-failures :: ${what} (hash matches)`, async (ctx) => {
    const path = join(ctx.dir, file);
    const entries = [...(await serverBuildEntries('C')), entry];
    if (file.endsWith('.tar.gz')) await writeTar(path, entries, { gzip: true });
    else await writeZip(path, entries, rename);
    await offerArchive(ctx, path);
    await refusedUpdate(ctx, why);
  });
}

test.run();
