/**
 * `UpdateType: Manifest` with `Updates.Authentication` (a private CDN) under the real SS14.Watchdog and under ours,
 * side by side, each with a manifest and archive of its own on one loopback CDN, which redirects the archive to a
 * second origin (its storage host): which requests carry the Basic header, and the build that lands.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { type Cdn, startCdn } from '../fixtures/archives/serve.ts';
import { type BuiltArchive, manifestDoc, writeServerBuild } from '../fixtures/builds/build.ts';
import { peerConfig, sidesSuite } from './_support/peer.ts';

const KEY = 'main';
const USER = 'cdn-user';
const PASS = 'cdn:pass word';

interface Shared {
  cdn: Cdn | null;
  /** Another origin the CDN redirects archive downloads to (as a CDN hands them to its storage host). */
  storage: Cdn | null;
  files: { path: string; cleanup: () => Promise<void> } | null;
  build: BuiltArchive | null;
}

const test = sidesSuite<{ apiPort: number }, Shared>(
  'peer :: Manifest updates from a CDN that wants Basic auth, real vs ours',
  {
    prefix: 'wd-peer-auth-',
    keys: [KEY],
    ctx: { cdn: null, storage: null, files: null, build: null },
    before: async (ctx) => {
      ctx.files = await tempDir('wd-peer-auth-builds-');
      ctx.cdn = await startCdn();
      ctx.storage = await startCdn();
      ctx.build = await writeServerBuild(join(ctx.files.path, 'A.zip'), 'A');
    },
    side: async (name, _dir, urlsPort, ctx) => {
      const [cdn, storage, build] = [ctx.cdn!, ctx.storage!, ctx.build!];
      cdn.set(`/${name}/A.zip`, { kind: 'redirect', to: storage.url(`/${name}/A.zip`) });
      storage.set(`/${name}/A.zip`, { kind: 'file', file: build.path });
      cdn.set(`/${name}/manifest`, {
        kind: 'json',
        body: manifestDoc([
          { key: 'build-A', time: '2024-05-01T10:00:00Z', url: cdn.url(`/${name}/A.zip`), sha256: build.sha256 },
        ]),
      });
      const apiPort = await freePort();
      const updates = [
        '      UpdateType: Manifest',
        '      Updates:',
        `        ManifestUrl: ${JSON.stringify(cdn.url(`/${name}/manifest`))}`,
        `        Authentication: { Username: ${JSON.stringify(USER)}, Password: ${JSON.stringify(PASS)} }`,
      ];
      const yaml = peerConfig({
        urlsPort,
        instances: [
          { key: KEY, port: apiPort, timeoutSeconds: 20, lines: updates, env: { FIXTURE_LIFETIME_MS: '60000' } },
        ],
      });
      return { yaml, keep: { apiPort } };
    },
    after: async (ctx) => {
      await ctx.cdn?.close();
      await ctx.storage?.close();
      await ctx.files?.cleanup();
    },
  },
);

test('manifest-auth :: both install and run the build, send Basic <user:password> to the CDN, and not to the host it redirects the archive to', async (ctx) => {
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

test.run();
