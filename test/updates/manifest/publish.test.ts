import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { run as runManifest } from '../../../src/cli/commands/manifest.ts';
import { UpdateError, UsageError } from '../../../src/errors.ts';
import { createManifestProvider } from '../../../src/updates/providers/manifest.ts';
import { publishBuild } from '../../../src/updates/manifest/publish.ts';
import { ROOT, tempDir } from '../../_support/env.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { startCdn, type Cdn } from '../../fixtures/archives/serve.ts';

const run = promisify(execFile);

interface Ctx {
  root: string;
  dist: string;
  cdn: Cdn;
  cleanup: () => Promise<void>;
}

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

const never = () => new AbortController().signal;
const sha = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')
    .toUpperCase();
const readDoc = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Doc;

/** Runs `bin/watchdog manifest …` as a real process from an unrelated working directory. */
async function watchdog(ctx: Ctx, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/watchdog'), 'manifest', ...args], {
      cwd: ctx.root,
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
async function serveDist(ctx: Ctx): Promise<void> {
  for (const name of await readdir(ctx.dist))
    ctx.cdn.set(`/dist/${name}`, { kind: 'file', file: join(ctx.dist, name) });
}

async function release(ctx: Ctx, label: string): Promise<void> {
  await writeZip(join(ctx.dist, 'SS14.Server_linux-x64.zip'), sampleBuild(label));
  await writeTar(join(ctx.dist, 'SS14.Server-win-x64.tar.gz'), sampleBuild(`${label}-win`), { gzip: true });
  await writeZip(join(ctx.dist, 'SS14.Client.zip'), [{ name: 'client.txt', content: label }]);
}

const pub = suite<Ctx>('watchdog manifest', {} as Ctx);

pub.before.each(async (ctx) => {
  const tmp = await tempDir();
  ctx.root = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.dist = join(tmp.path, 'dist');
  await mkdir(ctx.dist);
  await writeFile(join(ctx.dist, 'README.txt'), 'not an archive');
  ctx.cdn = await startCdn();
});

pub.after.each(async (ctx) => {
  await ctx.cdn?.close();
  await ctx.cleanup?.();
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

    const inst = join(ctx.root, 'instances', 'alpha');
    const p = createManifestProvider(
      providerContext({
        dir: inst,
        settings: {
          UpdateType: 'Manifest',
          Updates: {
            ManifestUrl: ctx.cdn.url('/dist/manifest.json'),
            Platform: 'linux-x64',
            DownloadTimeoutSeconds: 5,
          },
        },
      }),
    );
    await serveDist(ctx);
    assert.is(await p.apply(null, never()), keyA);
    assert.is(await readFile(join(inst, 'bin', 'build.txt'), 'utf8'), 'A');

    await release(ctx, 'B');
    const second = await watchdog(ctx, [ctx.dist, `--base-url=${base}`]);
    assert.is(second.code, 0, second.stderr);
    const keys = Object.keys((await readDoc(path)).builds);
    assert.is(keys.length, 2, 'previous builds are kept');
    assert.is(keys[0], keyA);
    await serveDist(ctx);
    assert.equal(await p.check(keyA as string, never()), { available: true, revision: keys[1] });
    assert.is(await p.apply(keyA as string, never()), keys[1]);
    assert.is(await readFile(join(inst, 'bin', 'build.txt'), 'utf8'), 'B');
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
  const missing = await inProcess([join(ctx.root, 'nope'), '--base-url', 'https://cdn.example.org/b/']);
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

const unit = suite<Ctx>('publishBuild', {} as Ctx);

unit.before.each(async (ctx) => {
  const tmp = await tempDir();
  ctx.root = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.dist = join(tmp.path, 'dist');
  await mkdir(ctx.dist);
});

unit.after.each((ctx) => ctx.cleanup());

async function throwsKind(
  promise: Promise<unknown>,
  kind: typeof UsageError | typeof UpdateError,
  pattern: RegExp,
): Promise<void> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, kind);
    assert.match((err as Error).message, pattern);
    return;
  }
  throw new Error(`expected ${kind.name} matching ${pattern}`);
}

unit(
  'publishBuild :: --out elsewhere, URL base gains a slash, same-millisecond releases stay distinct',
  async (ctx) => {
    await writeZip(join(ctx.dist, 'game_linux-arm64.zip'), sampleBuild('A'));
    const out = join(ctx.root, 'site', 'manifest.json');
    await mkdir(join(ctx.root, 'site'));
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
    await throwsKind(publishBuild({ dir: ctx.dist, baseUrl: 'https://x.example/' }), UpdateError, /is not JSON/);
    assert.is(await readFile(path, 'utf8'), '{ broken');
  },
);

unit('publishBuild :: ambiguous folders and bad URLs are usage errors', async (ctx) => {
  await writeZip(join(ctx.dist, 'a_linux-x64.zip'), sampleBuild('A'));
  await throwsKind(publishBuild({ dir: ctx.dist, baseUrl: 'not a url' }), UsageError, /not an absolute URL/);
  await throwsKind(publishBuild({ dir: ctx.dist, baseUrl: 'ftp://x/' }), UsageError, /http or https/);
  await writeZip(join(ctx.dist, 'b-linux-x64.zip'), sampleBuild('B'));
  await throwsKind(
    publishBuild({ dir: ctx.dist, baseUrl: 'https://x/' }),
    UsageError,
    /two server archives for linux-x64/,
  );
  await import('node:fs/promises').then((fs) => fs.rm(join(ctx.dist, 'b-linux-x64.zip')));
  await writeZip(join(ctx.dist, 'Client1.zip'), []);
  await writeZip(join(ctx.dist, 'client2.zip'), []);
  await throwsKind(publishBuild({ dir: ctx.dist, baseUrl: 'https://x/' }), UsageError, /several client archives/);
});

unit.run();
