/**
 * `UpdateType: Manifest` from a loopback CDN under the real SS14.Watchdog and under ours, each in a fresh folder of
 * its own with the same appsettings.yml (but for the ports): what lands in `bin/` (files, contents, execute bits),
 * the revision recorded, the server that runs; then `POST /update` after the manifest gains a newer build. Last,
 * our daemon started in the real watchdog's folder takes over its installed build without downloading it again.
 */
import { lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import * as assert from 'uvu/assert';
import { type StatusJson, startDaemon } from '../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { type Cdn, startCdn } from '../fixtures/archives/serve.ts';
import { type BuiltArchive, type ManifestBuild, manifestDoc, writeServerBuild } from '../fixtures/builds/build.ts';
import {
  difference,
  isRunningState,
  killPid,
  peerProgram,
  peerSuite,
  pidsWith,
  SERILOG,
  startReal,
} from './_support/peer.ts';

const KEY = 'main';
const TOKEN = 't';

type SideName = 'real' | 'ours';

interface Side {
  dir: string;
  urlsPort: number;
  apiPort: number;
  stop: (() => Promise<number | null>) | null;
  log: () => string;
  trees: Record<string, Tree>;
}

interface Ctx {
  files: { path: string; cleanup: () => Promise<void> } | null;
  cdn: Cdn | null;
  a: BuiltArchive | null;
  b: BuiltArchive | null;
  builds: ManifestBuild[];
  sides: Partial<Record<SideName, Side>>;
  extra: Array<() => Promise<number | null>>;
}

/** Every entry under a folder: path → `mode` (permission bits, octal) and `content` (files) or `dir`/`link`. */
type Tree = Record<string, string>;

async function tree(root: string): Promise<Tree> {
  const out: Tree = {};
  const walk = async (rel: string) => {
    for (const name of (await readdir(join(root, rel))).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const st = await lstat(join(root, path));
      const mode = (st.mode & 0o777).toString(8);
      if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        await walk(path);
      } else if (st.isSymbolicLink()) out[path] = 'link';
      else out[path] = `file ${mode} ${st.size} ${(await readFile(join(root, path))).toString('base64').slice(0, 40)}`;
    }
  };
  await walk('');
  return out;
}

function config(side: Side, manifestUrl: string): string {
  return (
    [
      SERILOG,
      `Urls: http://localhost:${side.urlsPort}`,
      'Process:',
      '  PersistServers: false',
      'Servers:',
      '  Instances:',
      `    ${KEY}:`,
      `      ApiToken: ${TOKEN}`,
      `      ApiPort: ${side.apiPort}`,
      '      TimeoutSeconds: 5',
      '      DumpOnTimeout: false',
      '      UpdateType: Manifest',
      `      Updates: { ManifestUrl: ${JSON.stringify(manifestUrl)} }`,
      `      Arguments: ["--cvar", "net.port=${side.apiPort}", "--cvar", "watchdog.checkin_interval=0.3"]`,
      '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "120000" }',
    ].join('\n') + '\n'
  );
}

async function dbRevision(dir: string): Promise<unknown> {
  const SQL = await initSqlJs();
  const db = new SQL.Database(await readFile(join(dir, 'data.db')));
  try {
    return db.exec('SELECT Revision FROM ServerInstance WHERE Key = ?', [KEY])[0]?.values[0]?.[0];
  } finally {
    db.close();
  }
}

/** What the build's game server says about itself (test/fixtures/builds/server.mjs). */
async function serverBuild(port: number): Promise<{ build: string; pid: number; cwd: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`status ${res.status}`);
  return (await res.json()) as { build: string; pid: number; cwd: string };
}

const runningBuild = (port: number, build: string, notPid = 0) =>
  waitFor(
    `the server of build ${build}`,
    async () => {
      const s = await serverBuild(port);
      return s.build === build && s.pid !== notPid ? s : undefined;
    },
    30_000,
    100,
  );

async function ourStatus(side: Side): Promise<StatusJson> {
  const res = await fetch(`http://localhost:${side.urlsPort}/instances/${KEY}/status`, {
    headers: { authorization: `Basic ${Buffer.from(`${KEY}:${TOKEN}`).toString('base64')}` },
  });
  return (await res.json()) as StatusJson;
}

const post = async (side: Side, action: string) => {
  const res = await fetch(`http://localhost:${side.urlsPort}/instances/${KEY}/${action}`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${KEY}:${TOKEN}`).toString('base64')}` },
  });
  await res.arrayBuffer();
  return res.status;
};

const test = peerSuite<Ctx>('peer :: Manifest updates from a loopback CDN, real vs ours', {
  files: null,
  cdn: null,
  a: null,
  b: null,
  builds: [],
  sides: {},
  extra: [],
});

test.before(async (ctx) => {
  await peerProgram();
  ctx.files = await tempDir('wd-peer-builds-');
  ctx.cdn = await startCdn();
  ctx.a = await writeServerBuild(join(ctx.files.path, 'A.zip'), 'A');
  ctx.b = await writeServerBuild(join(ctx.files.path, 'B.zip'), 'B');
  ctx.cdn.set('/files/A.zip', { kind: 'file', file: ctx.a.path });
  ctx.cdn.set('/files/B.zip', { kind: 'file', file: ctx.b.path });
  ctx.builds = [
    { key: 'build-A', time: '2024-05-01T10:00:00Z', url: ctx.cdn.url('/files/A.zip'), sha256: ctx.a.sha256 },
  ];
  ctx.cdn.set('/manifest', { kind: 'json', body: manifestDoc(ctx.builds) });
});

test.after(async (ctx) => {
  for (const stop of ctx.extra) await stop();
  for (const side of Object.values(ctx.sides)) await side.stop?.();
  for (const side of Object.values(ctx.sides)) {
    for (const pid of await pidsWith(join(side.dir, 'instances', KEY, 'config.toml'))) killPid(pid);
    await rm(side.dir, { recursive: true, force: true });
  }
  await ctx.cdn?.close();
  await ctx.files?.cleanup();
});

for (const name of ['real', 'ours'] as const) {
  test(`updates :: ${name}: installs build A from the manifest before the first launch`, async (ctx) => {
    const side: Side = {
      dir: (await tempDir(`wd-peer-upd-${name}-`)).path,
      urlsPort: await freePort(),
      apiPort: await freePort(),
      stop: null,
      log: () => '',
      trees: {},
    };
    ctx.sides[name] = side;
    await writeFile(join(side.dir, 'appsettings.yml'), config(side, ctx.cdn!.url('/manifest')));
    if (name === 'real') {
      const real = await startReal(side.dir, `http://localhost:${side.urlsPort}`);
      side.stop = () => real.stop();
      side.log = real.log;
    } else {
      const ours = await startDaemon(await readFile(join(side.dir, 'appsettings.yml'), 'utf8'), { dir: side.dir });
      side.stop = () => ours.stop();
      side.log = ours.log;
    }
    const server = await runningBuild(side.apiPort, 'A');
    assert.is(server.cwd, join(side.dir, 'instances', KEY), 'the server runs in the instance folder');
    side.trees.A = await tree(join(side.dir, 'instances', KEY, 'bin'));
    assert.match(
      side.trees.A['Robust.Server'] ?? '',
      /^file 755 /,
      'Robust.Server made executable (the zip stores 0644)',
    );
    if (name === 'real') assert.is(await dbRevision(side.dir), 'build-A', 'data.db revision');
    else assert.is((await ourStatus(side)).revision, 'build-A', 'status revision');
  });
}

test('updates :: bin/ holds the same files, contents and modes under both', async (ctx) => {
  assert.equal(ctx.sides.ours!.trees.A, ctx.sides.real!.trees.A);
});

for (const name of ['real', 'ours'] as const) {
  test(`updates :: ${name}: the manifest gains B; POST /update: the server is told, leaves, and comes back on B`, async (ctx) => {
    if (ctx.builds.length === 1) {
      ctx.builds.push({
        key: 'build-B',
        time: '2024-05-02T10:00:00Z',
        url: ctx.cdn!.url('/files/B.zip'),
        sha256: ctx.b!.sha256,
      });
      ctx.cdn!.set('/manifest', { kind: 'json', body: manifestDoc(ctx.builds) });
    }
    const side = ctx.sides[name]!;
    const before = await serverBuild(side.apiPort);
    assert.is(await post(side, 'update'), 200);
    await runningBuild(side.apiPort, 'B', before.pid);
    // The build's server prints this when it receives /update (the real watchdog echoes server output to its own).
    if (name === 'real') assert.match(side.log(), 'build A: update requested (reason UpdateAvailable), leaving...');
    else
      assert.match(
        await readFile(join(side.dir, 'instances', KEY, 'logs', 'server.log'), 'utf8'),
        'build A: update requested (reason UpdateAvailable), leaving...',
      );
    side.trees.B = await tree(join(side.dir, 'instances', KEY, 'bin'));
    assert.match(side.trees.B['build.txt'] ?? '', /^file 644 2 /, 'bin/ is build B');
    const prev = await readdir(join(side.dir, 'instances', KEY)).then((e) => e.includes('bin.prev'));
    if (name === 'real') {
      assert.is(await dbRevision(side.dir), 'build-B');
      assert.not.ok(prev, 'the real watchdog deletes the old bin/');
    } else {
      assert.is((await ourStatus(side)).revision, 'build-B');
      assert.ok(prev, 'ours keeps the previous build in bin.prev/ (rollback)');
      assert.is(await readFile(join(side.dir, 'instances', KEY, 'bin.prev', 'build.txt'), 'utf8'), 'A\n');
      difference(
        'Manifest update: ours keeps the previous build in bin.prev/ (for rollback); the real watchdog deletes bin/ before extracting',
      );
    }
  });
}

test('updates :: bin/ after the update is the same under both', async (ctx) => {
  assert.equal(ctx.sides.ours!.trees.B, ctx.sides.real!.trees.B);
});

test('updates :: POST /update with nothing newer in the manifest: the server is not told, not relaunched, nothing downloaded, by both', async (ctx) => {
  const before = ctx.cdn!.requests.length;
  const pids: Partial<Record<SideName, number>> = {};
  const logFrom = { real: ctx.sides.real!.log().length, ours: ctx.sides.ours!.log().length };
  for (const name of ['real', 'ours'] as const) {
    const side = ctx.sides[name]!;
    pids[name] = (await serverBuild(side.apiPort)).pid;
    assert.is(await post(side, 'update'), 200);
  }
  const checked = await waitFor(
    'both to fetch the manifest',
    () => {
      const fetched = ctx.cdn!.requests.slice(before).filter((r) => r.path === '/manifest').length;
      return fetched >= 2 ? fetched : undefined;
    },
    10_000,
    50,
  );
  assert.ok(checked >= 2);
  // The later marker: each side's verdict on the manifest, logged once it has decided to do nothing.
  const verdict = { real: /Update available\? False/, ours: /\] no update available/ };
  for (const name of ['real', 'ours'] as const)
    await waitFor(`${name}: its verdict on the manifest`, () =>
      verdict[name].test(ctx.sides[name]!.log().slice(logFrom[name])),
    );
  for (const name of ['real', 'ours'] as const) {
    const side = ctx.sides[name]!;
    const now = await serverBuild(side.apiPort);
    assert.equal([now.build, now.pid], ['B', pids[name]], `${name}: the same server on B`);
  }
  assert.not.ok(
    ctx.cdn!.requests.slice(before).some((r) => r.path.startsWith('/files/')),
    'no archive downloaded',
  );
});

test("updates :: ours in the real watchdog's folder takes over build B as installed: revision from data.db, no download", async (ctx) => {
  const side = ctx.sides.real!;
  assert.is(await side.stop!(), 0);
  side.stop = null;
  const seen = ctx.cdn!.requests.length;
  const ours = await startDaemon(await readFile(join(side.dir, 'appsettings.yml'), 'utf8'), { dir: side.dir });
  ctx.extra.push(() => ours.stop());
  await runningBuild(side.apiPort, 'B');
  const s = await waitFor(
    'server.running',
    async () => {
      const st = await ourStatus(side);
      return isRunningState(st.state) ? st : undefined;
    },
    15_000,
    100,
  );
  assert.is(s.revision, 'build-B', 'the revision the real watchdog recorded');
  assert.equal(await tree(join(side.dir, 'instances', KEY, 'bin')), side.trees.B, 'bin/ untouched');
  const fetched = ctx.cdn!.requests.slice(seen).map((r) => r.path);
  assert.not.ok(
    fetched.some((p) => p.startsWith('/files/')),
    `no archive downloaded (fetched: ${fetched.join(', ')})`,
  );
  assert.match(ours.log(), `imported from the real watchdog's data file: revision build-B`);
});

test.run();
