/**
 * The migration, done for real: the real SS14.Watchdog runs a server in a folder with `PersistServers: true`,
 * is stopped with SIGTERM (the server stays up, its pid and check-in token in the real `data.db`), and our daemon
 * is started in the same folder with the same files. It must adopt that server: same pid, no second launch, and
 * the server's check-ins (with the token the real watchdog gave it) accepted past 3 × TimeoutSeconds.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import * as assert from 'uvu/assert';
import { type RunningDaemon, type StatusJson, startDaemon } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import * as peer from './_support/peer.ts';

const KEY = 'main';
const TOKEN = 't';
/** Well above the 0.3 s check-in period: a busy machine must not make the healthy server look hung. */
const TIMEOUT_S = 6;

interface Ctx {
  dir: string;
  cleanup: () => Promise<void>;
  urlsPort: number;
  apiPort: number;
  real: peer.RealWatchdog | null;
  ours: RunningDaemon | null;
  server: number;
  token: string;
  /** When our daemon was started (ms). */
  adoptedAt: number;
}

const instanceDir = (ctx: Ctx) => join(ctx.dir, 'instances', KEY);
const startLog = (ctx: Ctx) => join(ctx.dir, 'starts.log');
const starts = async (ctx: Ctx) =>
  (await readFile(startLog(ctx), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
const serversNow = (ctx: Ctx) => peer.pidsWith(join(instanceDir(ctx), 'config.toml'));

async function status(ctx: Ctx): Promise<StatusJson> {
  const res = await fetch(`http://localhost:${ctx.urlsPort}/instances/${KEY}/status`, {
    headers: { authorization: `Basic ${Buffer.from(`${KEY}:${TOKEN}`).toString('base64')}` },
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new Error(`status ${res.status}`);
  return (await res.json()) as StatusJson;
}

async function dataDbRow(file: string): Promise<Record<string, unknown>> {
  const SQL = await initSqlJs();
  const db = new SQL.Database(await readFile(file));
  try {
    const res = db.exec('SELECT Key, Revision, PersistedToken, PersistedPid FROM ServerInstance WHERE Key = ?', [KEY]);
    const first = res[0];
    if (first?.values.length !== 1) throw new Error(`no ServerInstance row for ${KEY}`);
    return Object.fromEntries(first.columns.map((c, i) => [c, first.values[0]![i]]));
  } finally {
    db.close();
  }
}

async function environOf(pid: number): Promise<Map<string, string>> {
  const text = await readFile(`/proc/${pid}/environ`, 'utf8');
  return new Map(
    text
      .split('\0')
      .filter(Boolean)
      .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );
}

/** Runs the real watchdog with PersistServers until its server checks in, then SIGTERM: the server stays up. */
async function realLeavesServer(ctx: Ctx): Promise<void> {
  await writeFile(
    join(ctx.dir, 'appsettings.yml'),
    peer.peerConfig({
      urlsPort: ctx.urlsPort,
      persist: true,
      instances: [
        {
          key: KEY,
          port: ctx.apiPort,
          runCommand: fixture('log-starts.mjs'),
          timeoutSeconds: TIMEOUT_S,
          env: { START_LOG: startLog(ctx), FIXTURE_LIFETIME_MS: '120000' },
        },
      ],
    }),
  );
  const real = await peer.startReal(ctx.dir, `http://localhost:${ctx.urlsPort}`);
  ctx.real = real;
  await waitFor(
    'two pings received by the real watchdog',
    () => (real.log().match(/Received ping from server\./g) ?? []).length >= 2,
    20_000,
    100,
  );
  const launched = await starts(ctx);
  assert.is(launched.length, 1, 'the real watchdog launched the server once');
  ctx.server = launched[0]!;
  assert.equal(await serversNow(ctx), [ctx.server], 'one server runs, the one that logged its start');
  ctx.token = (await environOf(ctx.server)).get('ROBUST_CVAR_watchdog__token') ?? '';
  assert.is(Buffer.from(ctx.token, 'base64').length, 64, 'the token the real watchdog gave is 64 bytes, base64');

  assert.is(await real.stop(), 0, 'the real watchdog exits 0 on SIGTERM');
  ctx.real = null;
  assert.match(real.log(), `Not shutting down ${KEY}, persisting running server`);
  assert.ok(peer.isAlive(ctx.server), 'PersistServers: the server outlives the real watchdog');
  const row = await dataDbRow(join(ctx.dir, 'data.db'));
  assert.is(row.PersistedPid, ctx.server, 'data.db: PersistedPid is the server');
  assert.is(row.PersistedToken, ctx.token, "data.db: PersistedToken is the token in the server's environment");
}

const setUp = async (ctx: Ctx) => {
  Object.assign(ctx, await peer.peerFolder('wd-peer-migrate-'));
};

const tearDown = async (ctx: Ctx) => {
  await ctx.real?.stop(5000);
  await ctx.ours?.stop(10_000);
  const left = ctx.dir ? await serversNow(ctx) : [];
  for (const pid of new Set([ctx.server, ...left])) peer.killPid(pid);
  await ctx.cleanup();
};

const init = (): Ctx => ({
  dir: '',
  cleanup: async () => {},
  urlsPort: 0,
  apiPort: 0,
  real: null,
  ours: null,
  server: 0,
  token: '',
  adoptedAt: 0,
});

const test = peer.peerSuite<Ctx>('peer :: migration from the real watchdog (PersistServers)', init());
test.before(setUp);
test.after(tearDown);

test(
  'migration :: the real watchdog launches the server; on SIGTERM it leaves it running with its pid and token in data.db',
  realLeavesServer,
);

test('migration :: our daemon, started in the same folder, adopts that server: same pid, running, no second launch', async (ctx) => {
  assert.ok(ctx.server > 0 && peer.isAlive(ctx.server), 'the server the real watchdog left is running');
  const startedAt = Date.now();
  ctx.adoptedAt = startedAt;
  const ours = await startDaemon(await readFile(join(ctx.dir, 'appsettings.yml'), 'utf8'), {
    dir: ctx.dir,
  });
  ctx.ours = ours;
  const s = await waitFor(
    'the instance to be running',
    async () => {
      const st = await status(ctx);
      return peer.isRunningState(st.state) && st.pid !== null ? st : undefined;
    },
    15_000,
    100,
  );
  assert.is(s.pid, ctx.server, "the status names the real watchdog's server");
  assert.match(
    ours.log(),
    `[watchdog:${KEY}] imported from the real watchdog's data file: revision (none); its server (pid ${ctx.server}) is running and is adopted`,
  );
  assert.not.match(ours.log(), /server launched/, 'our daemon launched no server');
  assert.equal(await starts(ctx), [ctx.server], 'the server was started once, by the real watchdog');
  assert.equal(await serversNow(ctx), [ctx.server], 'exactly one server runs');
  await waitFor(
    'a check-in accepted by our daemon',
    async () => {
      const st = await status(ctx);
      return st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > startedAt;
    },
    10_000,
    100,
  );
});

test("migration :: its check-ins (the real watchdog's token) keep being accepted past 3 × TimeoutSeconds", async (ctx) => {
  assert.ok(ctx.ours, 'our daemon runs');
  // The fact itself: a check-in accepted later than 3 × TimeoutSeconds after our daemon started.
  const past = ctx.adoptedAt + 3 * TIMEOUT_S * 1000;
  const s = await waitFor(
    'a check-in accepted past 3 × TimeoutSeconds',
    async () => {
      const st = await status(ctx);
      return st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > past ? st : undefined;
    },
    3 * TIMEOUT_S * 1000 + 30_000,
    100,
  );
  assert.ok(peer.isRunningState(s.state), `still running (${s.state})`);
  assert.equal([s.pid, s.restarts], [ctx.server, 0], 'still the same server, never restarted');
  assert.not.match(
    ctx.ours!.log(),
    /check-in rejected: (stale or wrong token|no server running)/,
    'no check-in of the adopted server was refused',
  );
  assert.equal(await starts(ctx), [ctx.server], 'still one start');
  assert.equal(await serversNow(ctx), [ctx.server], 'still exactly one server');
  assert.is(await ctx.ours!.stop(), 0, 'our daemon exits 0');
  ctx.ours = null;
  assert.ok(peer.isAlive(ctx.server), 'PersistServers: our daemon leaves it running too');
});

test.run();

const off = peer.peerSuite<Ctx>('peer :: migration from the real watchdog, PersistServers turned off for ours', init());
off.before(setUp);
off.after(tearDown);

off('migration :: the real watchdog leaves its server running (PersistServers: true there)', realLeavesServer);

off(
  'migration :: ours with PersistServers: false shuts it down gracefully with the persisted token, then launches its own',
  async (ctx) => {
    assert.ok(ctx.server > 0 && peer.isAlive(ctx.server), 'the server the real watchdog left is running');
    const yaml = (await readFile(join(ctx.dir, 'appsettings.yml'), 'utf8')).replace(
      'PersistServers: true',
      'PersistServers: false',
    );
    assert.match(yaml, 'PersistServers: false');
    const ours = await startDaemon(yaml, { dir: ctx.dir });
    ctx.ours = ours;
    const s = await waitFor(
      'a new server running',
      async () => {
        const st = await status(ctx);
        return peer.isRunningState(st.state) && st.pid !== null && st.pid !== ctx.server ? st : undefined;
      },
      20_000,
      100,
    );
    assert.match(
      ours.log(),
      `its server (pid ${ctx.server}) is running; Process.PersistServers is off, so it is shut down gracefully before a new one launches`,
    );
    // The fixture obeys /shutdown only with the right WatchdogToken: "exited" (not "killed") proves the token from data.db.
    assert.match(ours.log(), /the leftover server exited after the shutdown request/);
    assert.not.ok(await peer.isRunningPid(ctx.server), "the real watchdog's server is gone");
    assert.equal(await starts(ctx), [ctx.server, s.pid], 'one new launch, after the old server');
    assert.equal(await serversNow(ctx), [s.pid], 'exactly one server runs');
  },
);

off.run();
