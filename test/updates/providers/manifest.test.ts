import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../src/config/load.ts';
import { newestBuild, parseManifest } from '../../../src/updates/manifest/schema.ts';
import type { UpdateProvider } from '../../../src/updates/provider.ts';
import { createManifestProvider } from '../../../src/updates/providers/manifest.ts';
import { waitFor } from '../../_support/env.ts';
import { sampleBuild, writeRawTar, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import type { Route } from '../../fixtures/archives/serve.ts';
import { providerContext, recordingLogger } from '../../fixtures/git/context.ts';
import {
  type CdnCtx as Ctx,
  cdnSuite,
  exists,
  never,
  oldBuildInBin,
  read,
  rejects,
  sha256Of as sha256,
} from '../_support/instance-suite.ts';

function provider(ctx: Ctx, updates: Record<string, unknown> = {}) {
  const pc = providerContext({
    dir: ctx.inst,
    settings: {
      UpdateType: 'Manifest',
      Updates: {
        ManifestUrl: ctx.cdn.url('/manifest.json'),
        Platform: 'linux-x64',
        // A loopback transfer runs into this only when it stalls; a loaded machine can take seconds.
        DownloadTimeoutSeconds: 60,
        ...updates,
      },
    },
  });
  return { p: createManifestProvider(pc), pc };
}

/** Serves `archive` at /files/<name> and a one-build manifest pointing at it. */
async function serveBuild(
  ctx: Ctx,
  archive: string,
  opts: { key?: string; platform?: string; hash?: string; route?: Route } = {},
) {
  const name = archive.split('/').at(-1) ?? 'a.zip';
  ctx.cdn.set(`/files/${name}`, opts.route ?? { kind: 'file', file: archive });
  const hash = opts.hash ?? (await sha256(archive)).toUpperCase();
  ctx.cdn.set('/manifest.json', {
    kind: 'json',
    body: {
      builds: {
        [opts.key ?? 'build-A']: {
          time: '2024-05-01T12:00:00Z',
          client: { url: ctx.cdn.url('/files/SS14.Client.zip'), sha256: 'AB' },
          server: { [opts.platform ?? 'linux-x64']: { url: ctx.cdn.url(`/files/${name}`), sha256: hash, size: 123 } },
        },
      },
    },
  });
}

/** The instance as it was: bin/ with its marker only, no bin.prev, no download or staging left over. */
async function untouched(ctx: Ctx): Promise<void> {
  await oldBuildInBin(ctx.inst);
  assert.not.ok(await exists(join(ctx.inst, 'bin.prev')));
  assert.equal(await readdir(join(ctx.inst, '.update')).catch(() => []), []);
}

/** Both check and apply fail with `pattern` and leave the instance untouched. */
async function failsBoth(ctx: Ctx, p: UpdateProvider, pattern: RegExp): Promise<void> {
  await rejects(p.check(null, never()), pattern);
  await rejects(p.apply(null, never()), pattern);
  await untouched(ctx);
}

// ---

const ok = cdnSuite('manifest provider');

ok('manifest :: installs the newest build for this platform and reports progress', async (ctx) => {
  const archive = join(ctx.dir, 'SS14.Server_linux-x64.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive);
  const { p, pc } = provider(ctx);
  assert.is(p.staged?.(), null);
  assert.equal(await p.check(null, never()), { available: true, revision: 'build-A' });
  assert.is(p.staged?.(), 'build-A', 'the check staged it');
  assert.equal(await p.check('build-A', never()), { available: false, revision: 'build-A' });
  assert.is(await p.apply(null, never()), 'build-A');
  assert.is(p.staged?.(), null, 'installed, so no longer staged');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A');
  assert.is((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o100, 0o100);
  assert.is(await read(join(ctx.inst, 'bin.prev', 'marker')), 'old build');
  assert.equal(await readdir(join(ctx.inst, '.update')), [], 'the download was removed');
  const phases = [...new Set(pc.phases.map((x) => x.phase))];
  assert.equal(phases, ['download', 'verify', 'extract', 'install']);
  const size = (await stat(archive)).size;
  assert.ok(pc.phases.some((x) => x.phase === 'download' && x.bytes === size && x.total === size));
});

ok('manifest :: falls back along the platform chain and follows relative URLs', async (ctx) => {
  const archive = join(ctx.dir, 'server-linux.tar.gz');
  await writeTar(archive, sampleBuild('L'), { gzip: true });
  ctx.cdn.set('/files/server-linux.tar.gz', { kind: 'file', file: archive });
  ctx.cdn.set('/manifest.json', {
    kind: 'json',
    body: {
      builds: {
        L: {
          time: '2024-01-01T00:00:00+02:00',
          server: {
            'win-x64': { url: 'nowhere.zip', sha256: 'AA' },
            linux: { url: 'files/server-linux.tar.gz', sha256: await sha256(archive) },
            any: { url: 'nowhere.zip', sha256: 'AA' },
          },
        },
      },
    },
  });
  assert.is(await provider(ctx).p.apply(null, never()), 'L');
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'L');
});

ok('manifest :: Basic auth goes on the manifest and the artifact requests', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive);
  await provider(ctx, { Authentication: { Username: 'robust', Password: 's3cret' } }).p.apply(null, never());
  const expected = `Basic ${Buffer.from('robust:s3cret').toString('base64')}`;
  assert.equal(
    ctx.cdn.requests.map((r) => [r.path, r.headers.authorization]),
    [
      ['/manifest.json', expected],
      ['/files/a.zip', expected],
    ],
  );
});

ok('manifest :: without Authentication no Authorization header is sent', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive);
  await provider(ctx).p.apply(null, never());
  assert.ok(ctx.cdn.requests.every((r) => r.headers.authorization === undefined));
});

ok('manifest :: only Username or only Password: the config loads and no Authorization header is sent', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive);
  for (const [part, value] of [
    ['Username', 'robust'],
    ['Password', 's3cret'],
  ] as const) {
    await writeFile(
      join(ctx.dir, 'appsettings.yml'),
      [
        'Servers:',
        '  Instances:',
        '    alpha:',
        '      ApiPort: 1212',
        '      UpdateType: Manifest',
        '      Updates:',
        `        ManifestUrl: ${ctx.cdn.url('/manifest.json')}`,
        '        Platform: linux-x64',
        '        Authentication:',
        `          ${part}: ${value}`,
        '',
      ].join('\n'),
    );
    const loaded = await loadConfig({ cwd: ctx.dir, env: {} });
    if (!loaded.ok)
      return assert.unreachable(`Authentication with only ${part} must load:\n${loaded.problems.join('\n')}`);
    const instance = loaded.config.instances[0];
    assert.is(instance?.dir, ctx.inst);
    assert.equal(instance?.settings.Updates.Authentication, { [part]: value });

    ctx.cdn.requests.length = 0;
    const p = createManifestProvider({
      instance: instance!,
      publicBaseUrl: 'http://127.0.0.1:5000/',
      log: recordingLogger(),
      progress: () => {},
    });
    assert.equal(await p.check(null, never()), { available: true, revision: 'build-A' });
    assert.equal(
      ctx.cdn.requests.map((r) => r.path),
      ['/manifest.json', '/files/a.zip'],
      'the manifest and the archive were fetched',
    );
    assert.equal(
      ctx.cdn.requests.map((r) => r.headers.authorization),
      [undefined, undefined],
      `only ${part}: no header`,
    );
  }
});

ok(
  'manifest :: field names match case-insensitively, as System.Text.Json reads them; build ids and platforms keep their case',
  async (ctx) => {
    const archive = join(ctx.dir, 'SS14.Server_linux-x64.zip');
    await writeZip(archive, sampleBuild('A'));
    ctx.cdn.set('/files/a.zip', { kind: 'file', file: archive });
    ctx.cdn.set('/manifest.json', {
      kind: 'json',
      body: {
        Builds: {
          'Build-A': {
            TIME: '2024-05-01T12:00:00Z',
            Server: {
              'linux-x64': { URL: ctx.cdn.url('/files/a.zip'), Sha256: (await sha256(archive)).toUpperCase(), Size: 1 },
            },
          },
          'build-old': { Time: '2024-01-01T00:00:00Z', Server: {} },
        },
      },
    });
    const { p } = provider(ctx);
    assert.equal(await p.check(null, never()), { available: true, revision: 'Build-A' });
    assert.is(await p.apply(null, never()), 'Build-A');
    assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A');
  },
);

ok.run();

// ---

const bad = cdnSuite('manifest failures');

bad('manifest :: HTTP 500 on the manifest', async (ctx) => {
  ctx.cdn.set('/manifest.json', { kind: 'status', status: 500 });
  await failsBoth(ctx, provider(ctx).p, /manifest at http:\/\/127\.0\.0\.1:\d+\/manifest\.json answered HTTP 500/);
});

bad('manifest :: a manifest that is not JSON', async (ctx) => {
  ctx.cdn.set('/manifest.json', { kind: 'text', body: '<html>gateway</html>', type: 'text/html' });
  await failsBoth(ctx, provider(ctx).p, /is not JSON \(it starts with "<html>gateway/);
});

bad('manifest :: JSON of the wrong shape', async (ctx) => {
  ctx.cdn.set('/manifest.json', { kind: 'json', body: { builds: { x: { time: 'yesterday', server: {} } } } });
  await failsBoth(ctx, provider(ctx).p, /builds\.x\.time: expected an ISO-8601 time/);
});

bad('manifest :: no builds', async (ctx) => {
  ctx.cdn.set('/manifest.json', { kind: 'json', body: { builds: {} } });
  await failsBoth(ctx, provider(ctx).p, /lists no builds/);
});

bad('manifest :: no build for this platform', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive, { platform: 'win-x64' });
  await failsBoth(
    ctx,
    provider(ctx).p,
    /no server archive for this platform linux-x64 \(tried linux-x64, linux, unix-x64, unix, any, base; it offers win-x64\)/,
  );
});

bad('manifest :: hash mismatch', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive, { hash: 'F'.repeat(64) });
  await rejects(provider(ctx).p.apply(null, never()), /does not match its expected SHA-256/);
  await untouched(ctx);
});

bad("manifest :: an empty sha256 (the docs' DIY manifest) is refused with the reason", async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive, { hash: '' });
  await rejects(
    provider(ctx).p.apply(null, never()),
    /gives no sha256 .* cannot be verified and is refused; fill in the SHA-256/,
  );
  await untouched(ctx);
  assert.not.ok(
    ctx.cdn.requests.some((r) => r.path.startsWith('/files/')),
    'nothing was downloaded',
  );
});

bad('manifest :: truncated download', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'pad.txt', content: 'p'.repeat(20_000), store: true }]);
  await serveBuild(ctx, archive, { route: { kind: 'truncate', file: archive, sendBytes: 1000 } });
  await rejects(provider(ctx).p.apply(null, never()), /cut short: got 1000 of \d+ bytes/);
  await untouched(ctx);
});

bad('manifest :: a download that stalls past the timeout', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive, { route: { kind: 'stall', file: archive, sendBytes: 50 } });
  await rejects(provider(ctx, { DownloadTimeoutSeconds: 0.3 }).p.apply(null, never()), /did not finish within 0\.3 s/);
  await untouched(ctx);
});

bad('manifest :: cancellation mid-download', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, sampleBuild('A'));
  await serveBuild(ctx, archive, { route: { kind: 'stall', file: archive, sendBytes: 50 } });
  const ac = new AbortController();
  const { p, pc } = provider(ctx, { DownloadTimeoutSeconds: 60 });
  const done = p.apply(null, ac.signal);
  await waitFor('the download to have begun', () => ctx.cdn.requests.some((r) => r.path === '/files/a.zip'), 10_000);
  ac.abort();
  await rejects(done, /cancelled/);
  assert.ok(pc.phases.some((x) => x.phase === 'download'));
  await untouched(ctx);
});

bad('manifest :: a corrupt archive (with a matching hash)', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeFile(archive, Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(500, 1)]));
  await serveBuild(ctx, archive);
  await rejects(provider(ctx).p.apply(null, never()), /zip archive is corrupt/);
  await untouched(ctx);
});

bad('manifest :: a zip entry with ../ (with a matching hash)', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'xx/evil.txt', content: 'evil' }], {
    'xx/evil.txt': '../evil.txt',
  });
  await serveBuild(ctx, archive);
  await rejects(provider(ctx).p.apply(null, never()), /refused archive entry "\.\.\/evil\.txt"/);
  await untouched(ctx);
  assert.not.ok(await exists(join(ctx.inst, '.update', 'evil.txt')));
});

bad('manifest :: a zip entry with an absolute path', async (ctx) => {
  const archive = join(ctx.dir, 'a.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'xetc/evil.txt', content: 'evil' }], {
    'xetc/evil.txt': '/etc/evil.txt',
  });
  await serveBuild(ctx, archive);
  await rejects(provider(ctx).p.apply(null, never()), /refused archive entry "\/etc\/evil\.txt": absolute path/);
  await untouched(ctx);
});

bad('manifest :: a tar link escaping the folder', async (ctx) => {
  const archive = join(ctx.dir, 'a.tar.gz');
  await writeTar(archive, [...sampleBuild('A'), { name: 'Resources/out', symlinkTo: '../../../../etc' }], {
    gzip: true,
  });
  await serveBuild(ctx, archive);
  await rejects(provider(ctx).p.apply(null, never()), /refused archive entry "Resources\/out": it is a link/);
  await untouched(ctx);
});

bad('manifest :: no ManifestUrl is a clear error', async (ctx) => {
  const { p } = provider(ctx, { ManifestUrl: undefined });
  await rejects(p.check(null, never()), /sets no Updates\.ManifestUrl/);
});

bad.run();

// ---

// A tar.gz is extracted while it downloads (src/updates/archive/sink.ts): the same refusals, and the download's verdict first.

const streamed = cdnSuite('manifest tar.gz streamed');

/** A tar.gz big enough to arrive in many chunks: incompressible padding after the build. */
async function bigTgz(ctx: Ctx, label = 'A'): Promise<string> {
  const archive = join(ctx.dir, `SS14.Server_linux-x64-${label}.tar.gz`);
  await writeTar(
    archive,
    [...sampleBuild(label), { name: 'pad.bin', content: randomBytes(600_000).toString('base64') }],
    { gzip: true },
  );
  return archive;
}

streamed(
  'manifest :: a tar.gz is extracted while it downloads: no copy of it on disk, the extract phase folds into the download',
  async (ctx) => {
    const archive = await bigTgz(ctx);
    await serveBuild(ctx, archive);
    const { p, pc } = provider(ctx);
    assert.is(await p.apply(null, never()), 'build-A');
    assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A');
    assert.is((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o100, 0o100);
    assert.equal([...new Set(pc.phases.map((x) => x.phase))], ['download', 'verify', 'install']);
    assert.ok(
      pc.log.records.some((r) => r.msg === 'downloaded and extracted server archive'),
      'logged as streamed',
    );
    assert.equal(await readdir(join(ctx.inst, '.update')), []);
  },
);

streamed(
  'manifest :: a streamed tar.gz with the wrong hash is refused for its hash, its extraction thrown away',
  async (ctx) => {
    const archive = await bigTgz(ctx);
    await serveBuild(ctx, archive, { hash: 'F'.repeat(64) });
    await rejects(provider(ctx).p.apply(null, never()), /does not match its expected SHA-256/);
    await untouched(ctx);
  },
);

streamed(
  'manifest :: a damaged tar.gz is reported for its hash, not as a corrupt archive (the rest is still read)',
  async (ctx) => {
    const good = await bigTgz(ctx);
    const data = await readFile(good);
    data.fill(0x55, 2000, 4000); // breaks the deflate stream early on
    const archive = join(ctx.dir, 'damaged.tar.gz');
    await writeFile(archive, data);
    await serveBuild(ctx, archive, { hash: await sha256(good) });
    await rejects(provider(ctx).p.apply(null, never()), /does not match its expected SHA-256/);
    await untouched(ctx);
  },
);

streamed('manifest :: a corrupt tar.gz with a matching hash is refused as corrupt', async (ctx) => {
  const data = await readFile(await bigTgz(ctx));
  data.fill(0x55, 2000, 4000);
  const archive = join(ctx.dir, 'corrupt.tar.gz');
  await writeFile(archive, data);
  await serveBuild(ctx, archive);
  await rejects(provider(ctx).p.apply(null, never()), /tar archive is corrupt/);
  await untouched(ctx);
});

streamed('manifest :: a streamed tar.gz cut short is reported as cut short', async (ctx) => {
  const archive = await bigTgz(ctx);
  await serveBuild(ctx, archive, { route: { kind: 'truncate', file: archive, sendBytes: 100_000 } });
  // The CDN cuts the connection 20 ms after writing 100 000 bytes: on a busy machine fewer have reached the client.
  const err = await rejects(provider(ctx).p.apply(null, never()), /cut short: got \d+ of \d+ bytes/);
  const [, got, of] = /got (\d+) of (\d+)/.exec(err.message) ?? [];
  assert.ok(Number(got) <= 100_000 && Number(of) === (await stat(archive)).size, err.message);
  await untouched(ctx);
});

streamed('manifest :: a streamed tar.gz that stalls runs into the timeout; cancelled, it stops', async (ctx) => {
  const archive = await bigTgz(ctx);
  await serveBuild(ctx, archive, { route: { kind: 'stall', file: archive, sendBytes: 100_000 } });
  await rejects(provider(ctx, { DownloadTimeoutSeconds: 0.3 }).p.apply(null, never()), /did not finish within 0\.3 s/);
  await untouched(ctx);
  const ac = new AbortController();
  const requested = ctx.cdn.requests.length;
  const done = provider(ctx, { DownloadTimeoutSeconds: 60 }).p.apply(null, ac.signal);
  const name = archive.split('/').at(-1);
  await waitFor(
    'the download to have begun',
    () => ctx.cdn.requests.slice(requested).some((r) => r.path === `/files/${name}`),
    10_000,
  );
  ac.abort();
  await rejects(done, /cancelled/);
  await untouched(ctx);
});

streamed('manifest :: a streamed tar.gz with an entry climbing out is refused, nothing lands outside', async (ctx) => {
  const archive = join(ctx.dir, 'evil.tar.gz');
  await writeRawTar(
    archive,
    [
      { path: 'build.txt', type: 'File', content: 'A' },
      { path: '../../evil.txt', type: 'File', content: 'evil' },
      { path: 'pad.bin', type: 'File', content: randomBytes(300_000).toString('base64') },
    ],
    { gzip: true },
  );
  await serveBuild(ctx, archive);
  await rejects(provider(ctx).p.apply(null, never()), /refused archive entry "\.\.\/\.\.\/evil\.txt"/);
  await untouched(ctx);
  assert.not.ok(await exists(join(ctx.inst, 'evil.txt')));
});

streamed.run();

// ---

const doc = suite('manifest document');

const build = (time: string) => ({ time, server: {} });

doc('newestBuild :: the greatest time wins, whatever the order', () => {
  const m = parseManifest(
    {
      builds: { b: build('2024-03-01T00:00:00Z'), c: build('2024-01-01T00:00:00Z'), a: build('2024-02-01T00:00:00Z') },
    },
    'x',
  );
  assert.is(newestBuild(m)?.key, 'b');
});

doc('newestBuild :: on equal times the entry later in the document wins', () => {
  const t = '2024-03-01T00:00:00Z';
  assert.is(newestBuild(parseManifest({ builds: { first: build(t), second: build(t) } }, 'x'))?.key, 'second');
  assert.is(newestBuild(parseManifest({ builds: { second: build(t), first: build(t) } }, 'x'))?.key, 'first');
  // Same instant written with different offsets is a tie too.
  assert.is(
    newestBuild(parseManifest({ builds: { z: build('2024-03-01T02:00:00+02:00'), y: build(t) } }, 'x'))?.key,
    'y',
  );
});

doc('newestBuild :: times compare as instants, not strings', () => {
  const m = parseManifest(
    { builds: { utc: build('2024-03-01T10:00:00Z'), east: build('2024-03-01T11:30:00+02:00') } },
    'x',
  );
  assert.is(newestBuild(m)?.key, 'utc');
});

doc('parseManifest :: extra fields are accepted; an empty manifest has no newest build', () => {
  const m = parseManifest(
    {
      version: 2,
      builds: {
        a: { time: '2024-01-01T00:00:00Z', extra: true, server: { 'linux-x64': { url: 'u', sha256: 'AA', size: 5 } } },
      },
    },
    'x',
  );
  assert.is(m.builds.a?.server['linux-x64']?.url, 'u');
  assert.is(newestBuild(parseManifest({ builds: {} }, 'x')), undefined);
});

/** `{ builds: { <key>: { time, server: { linux-x64: { url, sha256 } } } } }` with every field name through `name`. */
function spelled(name: (field: string) => string, builds: Record<string, string>) {
  const entries = Object.entries(builds).map(([key, time]) => [
    key,
    {
      [name('time')]: time,
      [name('client')]: { [name('url')]: `c-${key}`, [name('sha256')]: 'AB' },
      [name('server')]: { 'linux-x64': { [name('url')]: `s-${key}`, [name('sha256')]: 'CD', size: 5 } },
    },
  ]);
  return { [name('builds')]: Object.fromEntries(entries) };
}

doc(
  'parseManifest :: capitalised or upper-case field names are read like lower-case ones and pick the same build',
  () => {
    const builds = { 'Old-Build': '2024-01-01T00:00:00Z', ABC123: '2024-03-01T00:00:00Z', mid: '2024-02-01T00:00:00Z' };
    const lower = parseManifest(
      spelled((f) => f, builds),
      'x',
    );
    const capital = parseManifest(
      spelled((f) => f[0]!.toUpperCase() + f.slice(1), builds),
      'x',
    );
    const upper = parseManifest(
      spelled((f) => f.toUpperCase(), builds),
      'x',
    );
    for (const m of [capital, upper]) {
      assert.equal(m, lower);
      assert.equal(newestBuild(m), newestBuild(lower));
    }
    assert.is(newestBuild(capital)?.key, 'ABC123', 'build ids keep their case');
    assert.equal(Object.keys(capital.builds), ['Old-Build', 'ABC123', 'mid'], 'and their document order');
    assert.equal(newestBuild(capital)?.build.server['linux-x64'], { url: 's-ABC123', sha256: 'CD', size: 5 });
    assert.equal(newestBuild(capital)?.build.client, { url: 'c-ABC123', sha256: 'AB' });
  },
);

doc('parseManifest :: platform keys are data: their case is kept, not folded', () => {
  const m = parseManifest(
    { Builds: { a: { Time: '2024-01-01T00:00:00Z', Server: { 'Linux-X64': { Url: 'u', Sha256: 'AA' } } } } },
    'x',
  );
  assert.equal(Object.keys(m.builds.a?.server ?? {}), ['Linux-X64']);
});

doc(
  'parseManifest :: a field spelled twice takes the later value, as System.Text.Json does; errors name the field',
  () => {
    const m = parseManifest({ builds: { a: { time: '2020-01-01T00:00:00Z', Time: '2024-01-01T00:00:00Z' } } }, 'x');
    assert.is(m.builds.a?.time, '2024-01-01T00:00:00Z');
    assert.throws(
      () => parseManifest({ Builds: { x: { Time: 'yesterday' } } }, 'x'),
      /builds\.x\.time: expected an ISO-8601 time/,
    );
    assert.throws(
      () => parseManifest({ Build: {} }, 'x'),
      /builds: expected an object with "builds"/,
      'only the name itself, in any case, matches',
    );
  },
);

doc.run();
