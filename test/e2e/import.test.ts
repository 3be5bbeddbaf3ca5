import { readFile, readlink, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../_support/daemon.ts';
import { freePort, tempDir, tempSuite } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { writeWatchdogDb } from '../fixtures/watchdog-db/build.ts';
import * as rs from './resilience/_support/daemon-crash.ts';

/**
 * Migrating from the real watchdog: its data.db (made here with its own migrations) names a server it left
 * running, started by the test as the real watchdog starts one (its arguments and check-in token, detached in its
 * own process group, before the daemon), and a pid that now belongs to an unrelated `sleep`. The real daemon
 * starts in that folder with no data.json anywhere.
 */
const TOKEN = 'tok';
const TIMEOUT_S = 3;
const SERVER = fixture('log-starts.mjs');

interface Ctx {
  dir: string;
  cleanup: () => Promise<void>;
  yaml: (persist: boolean) => string;
  ports: { alpha: number; beta: number; urls: number };
  /** The server "the real watchdog left running" for alpha. */
  old: number;
  unrelated: ReturnType<typeof rs.startSleep> | null;
  daemons: RunningDaemon[];
  servers: Set<number>;
  dbBytes: Buffer;
}

const init = (): Ctx => ({
  dir: '',
  cleanup: async () => {},
  yaml: () => '',
  ports: { alpha: 0, beta: 0, urls: 0 },
  old: 0,
  unrelated: null,
  daemons: [],
  servers: new Set(),
  dbBytes: Buffer.alloc(0),
});

const instanceDir = (ctx: Ctx, key: string) => join(ctx.dir, 'instances', key);
const startLog = (ctx: Ctx, key: string) => join(ctx.dir, `starts-${key}.log`);
const starts = async (ctx: Ctx, key: string) =>
  (await readFile(startLog(ctx, key), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
const OLD_MTIME = new Date('2023-03-03T03:03:03Z');

/** Starts alpha's server with the real watchdog's arguments and environment, detached like one it left behind. */
async function startOldServer(ctx: Ctx, secret: string): Promise<number> {
  const env = { ROBUST_CVAR_watchdog__token: secret, START_LOG: startLog(ctx, 'alpha'), FIXTURE_LIFETIME_MS: '120000' };
  return rs.startLeftServer({
    program: SERVER,
    key: 'alpha',
    dir: instanceDir(ctx, 'alpha'),
    baseUrl: `http://localhost:${ctx.ports.urls}/`,
    port: ctx.ports.alpha,
    env,
    servers: ctx.servers,
  });
}

async function setUp(ctx: Ctx, secret: string): Promise<void> {
  const tmp = await tempDir('wd-e2e-import-');
  ctx.dir = tmp.path;
  ctx.cleanup = tmp.cleanup;
  ctx.ports = { alpha: await freePort(), beta: await freePort(), urls: await freePort() };
  ctx.yaml = (persist) =>
    rs.fixedUrls(
      testConfig({
        persist,
        instances: (['alpha', 'beta'] as const).map((key) => ({
          key,
          port: ctx.ports[key],
          runCommand: SERVER,
          timeoutSeconds: TIMEOUT_S,
          extra: `      EnvironmentVariables: { START_LOG: ${JSON.stringify(startLog(ctx, key))}, FIXTURE_LIFETIME_MS: "120000" }`,
        })),
      }),
      ctx.ports.urls,
    );
  ctx.unrelated = rs.startSleep();
  ctx.old = await startOldServer(ctx, secret);
  const db = join(ctx.dir, 'data.db');
  await writeWatchdogDb(db, [
    { Key: 'alpha', Revision: 'old-1.2.3', PersistedToken: secret, PersistedPid: ctx.old },
    { Key: 'beta', Revision: 'old-4.5.6', PersistedToken: 'tok-beta', PersistedPid: ctx.unrelated.pid },
  ]);
  await utimes(db, OLD_MTIME, OLD_MTIME);
  ctx.dbBytes = await readFile(db);
}

async function tearDown(ctx: Ctx): Promise<void> {
  for (const d of ctx.daemons) await d.stop();
  if (ctx.dir)
    for (const key of ['alpha', 'beta'])
      for (const pid of await rs.pidsWith(join(instanceDir(ctx, key), 'config.toml'))) ctx.servers.add(pid);
  for (const pid of ctx.servers) rs.killGroup(pid);
  ctx.unrelated?.proc.kill('SIGKILL');
  await ctx.cleanup();
}

async function daemon(ctx: Ctx, persist: boolean): Promise<RunningDaemon> {
  const d = await startDaemon(ctx.yaml(persist), { dir: ctx.dir });
  ctx.daemons.push(d);
  return d;
}

async function dbUntouched(ctx: Ctx): Promise<void> {
  const db = join(ctx.dir, 'data.db');
  assert.ok(ctx.dbBytes.equals(await readFile(db)), 'data.db bytes unchanged');
  assert.is((await stat(db)).mtimeMs, OLD_MTIME.getTime(), 'data.db mtime unchanged');
}

/** A suite over one folder where the real watchdog left alpha's server running, `secret` persisted in data.db. */
function importSuite(name: string, secret: string) {
  const s = suite<Ctx>(name, init());
  s.before((ctx) => setUp(ctx, secret));
  s.after(tearDown);
  return s;
}

const persist = importSuite('e2e :: import from the real watchdog, PersistServers on', 'persisted-token-from-data-db');

persist(
  'import :: the server the real watchdog left running is adopted: same pid, no second launch, check-ins with the persisted token accepted past TimeoutSeconds',
  async (ctx) => {
    const startedAt = Date.now();
    const d = await daemon(ctx, true);
    const s = await rs.waitStatus(d, 'alpha', TOKEN, 'adopted', rs.running, 15_000);
    assert.is(s.pid, ctx.old, 'the old server is adopted, not replaced');
    assert.is(s.revision, 'old-1.2.3', 'revision from data.db');
    assert.match(
      d.log(),
      `[watchdog:alpha] imported from the real watchdog's data file: revision old-1.2.3; its server (pid ${ctx.old}) is running and is adopted`,
    );
    assert.is(rs.logLines(d, /\[watchdog:alpha\] adopted the server left running by the previous daemon/).length, 1);
    assert.is(rs.logLines(d, /\[watchdog:alpha\] server launched/).length, 0, 'no second alpha server launched');
    const first = await rs.waitStatus(
      d,
      'alpha',
      TOKEN,
      'a check-in accepted',
      (st) => st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > startedAt,
    );
    // A check-in accepted more than TimeoutSeconds after the first (the daemon's clock, in its status): had the
    // persisted token been refused, the hang deadline would have passed in between and the server been replaced.
    const pastTimeout = Date.parse(first.lastCheckinAt!) + TIMEOUT_S * 1000;
    const later = await rs.waitStatus(
      d,
      'alpha',
      TOKEN,
      'a check-in accepted past TimeoutSeconds, or another server',
      (st) => st.pid !== ctx.old || (st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > pastTimeout),
      TIMEOUT_S * 1000 + 20_000,
    );
    assert.equal(
      [later.state, later.pid, later.restarts],
      ['server.running', ctx.old, 0],
      'still the same server after TimeoutSeconds',
    );
    assert.not.match(d.log(), /\[watchdog:alpha\] .*timed out/, 'no hang was declared');
    assert.equal(await starts(ctx, 'alpha'), [ctx.old], "alpha's server started once, by the test");
    assert.equal(
      await rs.pidsWith(join(instanceDir(ctx, 'alpha'), 'config.toml')),
      [ctx.old],
      'exactly one alpha server runs',
    );
  },
);

persist(
  'import :: a persisted pid that is another program is not adopted and left alive; the instance launches its own server',
  async (ctx) => {
    const d = ctx.daemons[0]!;
    const unrelated = ctx.unrelated!.pid;
    const s = await rs.waitStatus(d, 'beta', TOKEN, 'running its own server', rs.running);
    ctx.servers.add(s.pid!);
    assert.is.not(s.pid, unrelated);
    assert.is(s.revision, 'old-4.5.6', 'revision from data.db');
    assert.ok(rs.isAlive(unrelated), 'the unrelated process was not signalled');
    const exe = await readlink(`/proc/${unrelated}/exe`);
    assert.match(
      d.log(),
      `[watchdog:beta] imported from the real watchdog's data file: revision old-4.5.6; the persisted pid ${unrelated} is not adopted: it runs ${exe}, not the instance's program ${SERVER}`,
    );
    assert.equal(await starts(ctx, 'beta'), [s.pid], 'beta launched once');
    await dbUntouched(ctx);
  },
);

persist(
  'import :: the import is not repeated: the next daemon adopts from data.json, and data.db stays untouched',
  async (ctx) => {
    const first = ctx.daemons[0]!;
    const beta = (await rs.statusOf(first, 'beta', TOKEN)).pid;
    assert.is(await first.stop(), 0);
    assert.ok(rs.isAlive(ctx.old), 'PersistServers: the adopted server outlives the daemon');
    const data = JSON.parse(await readFile(join(instanceDir(ctx, 'alpha'), 'data.json'), 'utf8')) as {
      revision: string;
      launch: { pid: number };
    };
    assert.equal([data.revision, data.launch.pid], ['old-1.2.3', ctx.old]);
    const d = await daemon(ctx, true);
    assert.is((await rs.waitStatus(d, 'alpha', TOKEN, 'adopted again', rs.running)).pid, ctx.old);
    assert.is((await rs.waitStatus(d, 'beta', TOKEN, 'adopted', rs.running)).pid, beta);
    assert.is(rs.logLines(d, /imported from the real watchdog/).length, 0, 'no second import');
    assert.is(rs.logLines(d, /server launched/).length, 0);
    assert.equal(await starts(ctx, 'alpha'), [ctx.old]);
    assert.ok(rs.isAlive(ctx.unrelated!.pid));
    await dbUntouched(ctx);
  },
);

persist.run();

const off = importSuite('e2e :: import from the real watchdog, PersistServers off', 'another-persisted-token');

off(
  'import :: a verified server left running is shut down gracefully (with the persisted token) before the new launch',
  async (ctx) => {
    const d = await daemon(ctx, false);
    const s = await rs.waitStatus(
      d,
      'alpha',
      TOKEN,
      'a new server',
      (st) => rs.running(st) && st.pid !== ctx.old,
      15_000,
    );
    ctx.servers.add(s.pid!);
    assert.match(
      d.log(),
      `its server (pid ${ctx.old}) is running; Process.PersistServers is off, so it is shut down gracefully before a new one launches`,
    );
    // "exited after the shutdown request": the old server accepted /shutdown, so the persisted token was right.
    assert.match(d.log(), /\[watchdog:alpha\] the leftover server exited after the shutdown request/);
    assert.not.ok(rs.isAlive(ctx.old), 'the old server is gone');
    assert.equal(await starts(ctx, 'alpha'), [ctx.old, s.pid], 'one new launch, after the old one');
    assert.is(s.revision, 'old-1.2.3');
    assert.ok(rs.isAlive(ctx.unrelated!.pid), 'the unrelated process is still left alone');
    await dbUntouched(ctx);
  },
);

off.run();

const broken = tempSuite('e2e :: import from a data.db that is not SQLite', {
  prefix: 'wd-e2e-import-bad-',
  ctx: { d: null as RunningDaemon | null },
  after: (ctx) => ctx.d?.stop(),
});

broken(
  'import :: a warning names the file and the problem; the daemon starts its instances without the import',
  async (ctx) => {
    await writeFile(join(ctx.dir, 'data.db'), "this is not the real watchdog's database\n");
    const d = await startDaemon(
      testConfig({ instances: [{ key: 'alpha', port: await freePort(), runCommand: SERVER }] }),
      { dir: ctx.dir },
    );
    ctx.d = d;
    const s = await rs.waitStatus(d, 'alpha', TOKEN, 'server.running', rs.running);
    assert.is(s.revision, null);
    assert.match(
      d.log(),
      `could not import from the real watchdog's data file; starting without it file=${join(ctx.dir, 'data.db')}`,
    );
    assert.match(d.log(), 'data.db is not an SQLite database');
    assert.is(await readFile(join(ctx.dir, 'data.db'), 'utf8'), "this is not the real watchdog's database\n");
  },
);

broken.run();
