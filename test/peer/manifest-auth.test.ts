/**
 * `UpdateType: Manifest` with `Updates.Authentication` (a private CDN) under the real SS14.Watchdog and under ours,
 * side by side, each with a manifest and archive of its own on one loopback CDN, which redirects the archive to a
 * second origin (its storage host): which requests carry the Basic header, and the build that lands.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { startCdn, type Cdn } from '../fixtures/archives/serve.ts';
import { manifestDoc, writeServerBuild } from '../fixtures/builds/build.ts';
import {
  killPid,
  peerAvailable,
  peerProgram,
  pidsWith,
  SERILOG,
  startSide,
  type RunningSide,
  type SideName,
} from './_peer.ts';

const KEY = 'main';
const USER = 'cdn-user';
const PASS = 'cdn:pass word';

interface Ctx {
  cdn: Cdn | null;
  /** Another origin the CDN redirects archive downloads to (as a CDN hands them to its storage host). */
  storage: Cdn | null;
  sides: Partial<Record<SideName, { run: RunningSide; apiPort: number }>>;
  dirs: Array<{ path: string; cleanup: () => Promise<void> }>;
}

const test = suite<Ctx>('peer :: Manifest updates from a CDN that wants Basic auth, real vs ours', {
  cdn: null,
  storage: null,
  sides: {},
  dirs: [],
});

test.before(async (ctx) => {
  try {
    await peerProgram();
    const files = await tempDir('wd-peer-auth-builds-');
    ctx.dirs.push(files);
    const cdn = await startCdn();
    ctx.cdn = cdn;
    const storage = await startCdn();
    ctx.storage = storage;
    const build = await writeServerBuild(join(files.path, 'A.zip'), 'A');
    await Promise.all(
      (['real', 'ours'] as const).map(async (name) => {
        cdn.set(`/${name}/A.zip`, { kind: 'redirect', to: storage.url(`/${name}/A.zip`) });
        storage.set(`/${name}/A.zip`, { kind: 'file', file: build.path });
        cdn.set(`/${name}/manifest`, {
          kind: 'json',
          body: manifestDoc([
            { key: 'build-A', time: '2024-05-01T10:00:00Z', url: cdn.url(`/${name}/A.zip`), sha256: build.sha256 },
          ]),
        });
        const dir = await tempDir(`wd-peer-auth-${name}-`);
        ctx.dirs.push(dir);
        const [urlsPort, apiPort] = [await freePort(), await freePort()];
        const yaml =
          [
            SERILOG,
            `Urls: http://localhost:${urlsPort}`,
            'Servers:',
            '  Instances:',
            `    ${KEY}:`,
            '      ApiToken: t',
            `      ApiPort: ${apiPort}`,
            '      TimeoutSeconds: 20',
            '      DumpOnTimeout: false',
            '      UpdateType: Manifest',
            '      Updates:',
            `        ManifestUrl: ${JSON.stringify(cdn.url(`/${name}/manifest`))}`,
            `        Authentication: { Username: ${JSON.stringify(USER)}, Password: ${JSON.stringify(PASS)} }`,
            `      Arguments: ["--cvar", "net.port=${apiPort}", "--cvar", "watchdog.checkin_interval=0.3"]`,
            '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "60000" }',
          ].join('\n') + '\n';
        ctx.sides[name] = { run: await startSide(name, dir.path, yaml, urlsPort), apiPort };
      }),
    );
  } catch (err) {
    console.error(err); // uvu reports a failed hook only as a suite that ran nothing
    throw err;
  }
});

test.after(async (ctx) => {
  for (const side of Object.values(ctx.sides)) await side.run.stop();
  for (const side of Object.values(ctx.sides))
    for (const pid of await pidsWith(join(side.run.dir, 'instances', KEY, 'config.toml'))) killPid(pid);
  await ctx.cdn?.close();
  await ctx.storage?.close();
  for (const dir of ctx.dirs) await dir.cleanup();
});

test('both install and run the build, send Basic <user:password> to the CDN, and not to the host it redirects the archive to', async (ctx) => {
  const expected = `Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`;
  for (const name of ['real', 'ours'] as const) {
    const side = ctx.sides[name]!;
    await waitFor(
      `${name}: build A running`,
      async () => {
        const res = await fetch(`http://127.0.0.1:${side.apiPort}/status`, { signal: AbortSignal.timeout(2000) });
        return res.ok && ((await res.json()) as { build?: string }).build === 'A';
      },
      30_000,
      100,
    );
    assert.is(await readFile(join(side.run.dir, 'instances', KEY, 'bin', 'build.txt'), 'utf8'), 'A\n');
    const mine = ctx.cdn!.requests.filter((r) => r.path.startsWith(`/${name}/`));
    const manifest = mine.filter((r) => r.path === `/${name}/manifest`);
    const archive = mine.filter((r) => r.path === `/${name}/A.zip`);
    assert.ok(
      manifest.length >= 1 && archive.length === 1,
      `${name}: manifest fetched, archive fetched once (${mine.map((r) => r.path).join(', ')})`,
    );
    for (const r of mine) assert.is(r.headers.authorization, expected, `${name}: ${r.path} carries the credentials`);
    const stored = ctx.storage!.requests.filter((r) => r.path === `/${name}/A.zip`);
    assert.is(stored.length, 1, `${name}: the redirect to the storage host followed`);
    assert.is(stored[0]!.headers.authorization, undefined, `${name}: the credentials are not sent to another origin`);
  }
});

if (peerAvailable) test.run();
