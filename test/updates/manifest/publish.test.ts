import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { run as runManifest } from '../../../src/cli/commands/manifest.ts';
import { UpdateError, UsageError } from '../../../src/errors.ts';
import { publishBuild } from '../../../src/updates/manifest/publish.ts';
import { createManifestProvider } from '../../../src/updates/providers/manifest.ts';
import { ROOT } from '../../_support/env.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import {
  type CdnCtx,
  cdnSuite,
  type InstanceCtx,
  instanceSuite,
  never,
  rejects,
  sha256Of,
} from '../_support/instance-suite.ts';

const run = promisify(execFile);

interface Ctx extends InstanceCtx {
  dist: string;
}

/** A dist/ folder in the temp folder, as a release pipeline leaves it. */
const distFolder = async (ctx: Ctx) => {
  ctx.dist = join(ctx.dir, 'dist');
  await mkdir(ctx.dist);
};

interface Doc {
  builds: Record<
    string,
    {
      time: string;
      client?: { url: string; sha256: string };
      server: Record<string, { url: string; sha256: string; size: number }>;
    }
  >;
}

const sha = async (file: string) => (await sha256Of(file)).toUpperCase();
const readDoc = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Doc;

/** Runs `bin/watchdog manifest …` as a real process from an unrelated working directory. */
async function watchdog(ctx: Ctx, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/watchdog'), 'manifest', ...args], {
      cwd: ctx.dir,
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The command's `run` in this process, with its stderr captured. */
async function inProcess(args: string[]): Promise<{ code: number; stderr: string }> {
  const write = process.stderr.write;
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await runManifest(args), stderr };
  } finally {
    process.stderr.write = write;
  }
}

/** Serves every file of the dist folder at /dist/<name>, as a static server would. */
async function serveDist(ctx: Ctx & CdnCtx): Promise<void> {
  for (const name of await readdir(ctx.dist))
    ctx.cdn.set(`/dist/${name}`, { kind: 'file', file: join(ctx.dist, name) });
}

async function release(ctx: Ctx, label: string): Promise<void> {
  await writeZip(join(ctx.dist, 'SS14.Server_linux-x64.zip'), sampleBuild(label));
  await writeTar(join(ctx.dist, 'SS14.Server-win-x64.tar.gz'), sampleBuild(`${label}-win`), { gzip: true });
  await writeZip(join(ctx.dist, 'SS14.Client.zip'), [{ name: 'client.txt', content: label }]);
}

const pub = cdnSuite('watchdog manifest', {
  instance: 'none',
  ctx: { dist: '' },
  before: async (ctx) => {
    await distFolder(ctx);
    await writeFile(join(ctx.dist, 'README.txt'), 'not an archive');
  },
});

pub(
  'watchdog manifest :: a real process writes a manifest the Manifest provider installs from, then adds a second build',
  async (ctx) => {
    await release(ctx, 'A');
    const base = ctx.cdn.url('/dist/');
    const first = await watchdog(ctx, [ctx.dist, '--base-url', base]);
    assert.is(first.code, 0, first.stderr);
    const path = join(ctx.dist, 'manifest.json');
    const doc = await readDoc(path);
    const [keyA] = Object.keys(doc.builds);
    assert.ok(
      keyA && !Number.isNaN(Date.parse(keyA)) && new Date(keyA).toISOString() === keyA,
      'keyed by an ISO-8601 timestamp',
    );
    assert.match(first.stdout, `added build ${keyA}`);
    const a = doc.builds[keyA as string];
    assert.is(a?.time, keyA);
    assert.equal(Object.keys(a?.server ?? {}).sort(), ['linux-x64', 'win-x64']);
    assert.equal(a?.server['linux-x64'], {
      url: `${base}SS14.Server_linux-x64.zip`,
      sha256: await sha(join(ctx.dist, 'SS14.Server_linux-x64.zip')),
      size: (await readFile(join(ctx.dist, 'SS14.Server_linux-x64.zip'))).length,
    });
    assert.match(a?.server['linux-x64']?.sha256 ?? '', /^[0-9A-F]{64}$/);
    assert.equal(a?.client, {
      url: `${base}SS14.Client.zip`,
      sha256: await sha(join(ctx.dist, 'SS14.Client.zip')),
      size: (await readFile(join(ctx.dist, 'SS14.Client.zip'))).length,
    });

    const p = createManifestProvider(
      providerContext({
        dir: ctx.inst,
        settings: {
          UpdateType: 'Manifest',
          Updates: {
            ManifestUrl: ctx.cdn.url('/dist/manifest.json'),
            Platform: 'linux-x64',
            // A loopback transfer runs into this only when it stalls; a loaded machine can take seconds.
            DownloadTimeoutSeconds: 60,
          },
        },
      }),
    );
    await serveDist(ctx);
    assert.is(await p.apply(null, never()), keyA);
    assert.is(await readFile(join(ctx.inst, 'bin', 'build.txt'), 'utf8'), 'A');

    await release(ctx, 'B');
    const second = await watchdog(ctx, [ctx.dist, `--base-url=${base}`]);
    assert.is(second.code, 0, second.stderr);
    const keys = Object.keys((await readDoc(path)).builds);
    assert.is(keys.length, 2, 'previous builds are kept');
    assert.is(keys[0], keyA);
    await serveDist(ctx);
    assert.equal(await p.check(keyA as string, never()), { available: true, revision: keys[1] });
    assert.is(await p.apply(keyA as string, never()), keys[1]);
    assert.is(await readFile(join(ctx.inst, 'bin', 'build.txt'), 'utf8'), 'B');
  },
);

pub('watchdog manifest :: usage errors exit 2 and say what was looked for', async (ctx) => {
  // In-process: each process start costs seconds on a busy machine; the process path is covered above.
  const none = await inProcess([ctx.dist, '--base-url', 'https://cdn.example.org/b/']);
  assert.is(none.code, 2);
  assert.match(
    none.stderr,
    /no server archive in .*dist: looked for file names like <name>_<platform>\.zip or <name>-<platform>\.tar\.gz/,
  );
  const missing = await inProcess([join(ctx.dir, 'nope'), '--base-url', 'https://cdn.example.org/b/']);
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /nope is not a folder/);
  const noUrl = await inProcess([ctx.dist]);
  assert.is(noUrl.code, 2);
  assert.match(noUrl.stderr, /--base-url is required/);
  const unknown = await inProcess([ctx.dist, '--bogus']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /bogus/);
});

pub.run();

// ---

const unit = instanceSuite('publishBuild', { instance: 'none', ctx: { dist: '' }, before: distFolder });

unit(
  'publishBuild :: --out elsewhere, URL base gains a slash, same-millisecond releases stay distinct',
  async (ctx) => {
    await writeZip(join(ctx.dist, 'game_linux-arm64.zip'), sampleBuild('A'));
    const out = join(ctx.dir, 'site', 'manifest.json');
    await mkdir(join(ctx.dir, 'site'));
    const now = new Date('2024-06-01T10:00:00.000Z');
    const one = await publishBuild({ dir: ctx.dist, baseUrl: 'https://cdn.example.org/builds', out, now });
    const two = await publishBuild({ dir: ctx.dist, baseUrl: 'https://cdn.example.org/builds', out, now });
    assert.is(one.key, '2024-06-01T10:00:00.000Z');
    assert.is(two.key, '2024-06-01T10:00:00.001Z');
    assert.is(one.client, undefined);
    const doc = await readDoc(out);
    assert.is(doc.builds[one.key]?.server['linux-arm64']?.url, 'https://cdn.example.org/builds/game_linux-arm64.zip');
    assert.is(doc.builds[one.key]?.client, undefined);
  },
);

unit(
  'publishBuild :: keeps unknown fields of an existing manifest; refuses one that is not JSON and leaves it',
  async (ctx) => {
    await writeZip(join(ctx.dist, 'S_linux-x64.zip'), sampleBuild('A'));
    const path = join(ctx.dist, 'manifest.json');
    await writeFile(
      path,
      JSON.stringify({ note: 'keep me', builds: { old: { time: '2020-01-01T00:00:00Z', server: {} } } }),
    );
    await publishBuild({ dir: ctx.dist, baseUrl: 'https://x.example/' });
    const doc = JSON.parse(await readFile(path, 'utf8')) as Doc & { note: string };
    assert.is(doc.note, 'keep me');
    assert.ok(doc.builds.old);
    await writeFile(path, '{ broken');
    await rejects(publishBuild({ dir: ctx.dist, baseUrl: 'https://x.example/' }), /is not JSON/, UpdateError);
    assert.is(await readFile(path, 'utf8'), '{ broken');
  },
);

unit('publishBuild :: ambiguous folders and bad URLs are usage errors', async (ctx) => {
  await writeZip(join(ctx.dist, 'a_linux-x64.zip'), sampleBuild('A'));
  await rejects(publishBuild({ dir: ctx.dist, baseUrl: 'not a url' }), /not an absolute URL/, UsageError);
  await rejects(publishBuild({ dir: ctx.dist, baseUrl: 'ftp://x/' }), /http or https/, UsageError);
  await writeZip(join(ctx.dist, 'b-linux-x64.zip'), sampleBuild('B'));
  await rejects(
    publishBuild({ dir: ctx.dist, baseUrl: 'https://x/' }),
    /two server archives for linux-x64/,
    UsageError,
  );
  await rm(join(ctx.dist, 'b-linux-x64.zip'));
  await writeZip(join(ctx.dist, 'Client1.zip'), []);
  await writeZip(join(ctx.dist, 'client2.zip'), []);
  await rejects(publishBuild({ dir: ctx.dist, baseUrl: 'https://x/' }), /several client archives/, UsageError);
});

unit.run();
