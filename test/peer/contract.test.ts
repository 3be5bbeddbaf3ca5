/**
 * The contract with a game server and with control clients, run under the real SS14.Watchdog and under ours,
 * one after the other, in the same folder, on the same port, with the same appsettings.yml (PersistServers off):
 *
 * - launch: argv, cwd, the check-in token in the environment, EnvironmentVariables;
 * - control: the status codes of `POST /instances/<key>/…` for right, wrong, missing credentials, an unknown key,
 *   a user that is not the key, a lower-case `basic` scheme;
 * - restart: what the server receives (`POST /shutdown`, its `WatchdogToken`, the `Reason`), and its relaunch;
 * - check-ins: a ping with the previous launch's secret, and with a wrong one, is 401;
 * - hang: a server that stops pinging (SIGSTOP) is killed about TimeoutSeconds after its last check-in;
 * - stop: the server receives `POST /update`, exits, and is not relaunched.
 *
 * The server is a recorder written into the temp folder (a .mjs file here would be loaded by uvu as a suite):
 * it speaks the engine's contract (test/fixtures/servers/_lib.mjs) and appends each launch and each control
 * request it receives to JSON-lines files.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as assert from 'uvu/assert';
import { startDaemon } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import * as peer from './_support/peer.ts';

const KEY = 'main';
const TOKEN = 't';
/** Well above the 0.3 s check-in period: a busy machine must not make a healthy server look hung. */
const TIMEOUT_S = 8;
const REAL_REASON = 'Watchdog shutting down.';

const RECORDER = (lib: string) => `#!/usr/bin/env node
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseLaunch, startCheckins, startHousekeeping } from ${JSON.stringify(lib)};

const launch = parseLaunch();
startHousekeeping();
appendFileSync(process.env.LAUNCH_LOG, JSON.stringify({ pid: process.pid, argv: process.argv.slice(2), cwd: process.cwd(), env: process.env }) + '\\n');
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/status') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ name: 'recorder', players: 0 }));
    }
    appendFileSync(process.env.CONTROL_LOG, JSON.stringify({
      pid: process.pid, method: req.method, path, token: req.headers.watchdogtoken ?? null,
      contentType: req.headers['content-type'] ?? null, body,
    }) + '\\n');
    const known = req.method === 'POST' && (path === '/shutdown' || path === '/update');
    if (!known) { res.writeHead(404); return res.end('Not Found'); }
    if (req.headers.watchdogtoken !== launch.token) { res.writeHead(401); return res.end('Unauthorized'); }
    res.writeHead(200, { 'Content-Type': 'text/plain', Connection: 'close' });
    res.end('Success', () => setImmediate(() => process.exit(0)));
  });
});
server.listen(launch.port, '127.0.0.1', () => startCheckins(launch));
`;

interface Launch {
  pid: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

interface Control {
  pid: number;
  method: string;
  path: string;
  token: string | null;
  contentType: string | null;
  body: string;
}

type SideName = 'real' | 'ours';

interface Side {
  stop: (() => Promise<number | null>) | null;
  log: () => string;
  launches: Launch[];
  controls: Control[];
  codes: Record<string, number>;
  hangKillMs: number;
}

interface Ctx {
  dir: string;
  cleanup: () => Promise<void>;
  urlsPort: number;
  apiPort: number;
  yaml: string;
  sides: Partial<Record<SideName, Side>>;
}

const jsonLines = async <T>(file: string): Promise<T[]> =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

const launchLog = (ctx: Ctx, side: SideName) => join(ctx.dir, `launches-${side}.jsonl`);
const controlLog = (ctx: Ctx, side: SideName) => join(ctx.dir, `controls-${side}.jsonl`);
const base = (ctx: Ctx) => `http://localhost:${ctx.urlsPort}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function post(url: string, authorization?: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: authorization ? { authorization } : {},
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Alive and not a zombie (the real watchdog may reap a killed server a moment later). */
async function running(pid: number): Promise<boolean> {
  if (!peer.isAlive(pid)) return false;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/\) Z /.test(stat);
}

/**
 * Resolves once `n` more check-ins of `name`'s server were accepted, counted from the call: the real watchdog logs
 * each one, ours shows the last one's time in the status.
 */
async function moreCheckins(ctx: Ctx, name: SideName, n: number): Promise<void> {
  const side = ctx.sides[name]!;
  if (name === 'real') {
    const count = () => (side.log().match(/Received ping from server\./g) ?? []).length;
    const from = count();
    await waitFor(`${name}: ${n} more check-ins`, () => count() >= from + n, 15_000, 25);
    return;
  }
  const last = async () => {
    const res = await fetch(`${base(ctx)}/instances/${KEY}/status`, {
      headers: { authorization: `Basic ${b64(`${KEY}:${TOKEN}`)}` },
    });
    return ((await res.json()) as { lastCheckinAt: string | null }).lastCheckinAt;
  };
  let previous = await last();
  let seen = 0;
  await waitFor(
    `${name}: ${n} more check-ins`,
    async () => {
      const now = await last();
      if (now !== null && now !== previous) [previous, seen] = [now, seen + 1];
      return seen >= n;
    },
    15_000,
    25,
  );
}

const test = peer.peerSuite<Ctx>('peer :: launch, control, check-in and hang contract, real vs ours', {
  dir: '',
  cleanup: async () => {},
  urlsPort: 0,
  apiPort: 0,
  yaml: '',
  sides: {},
});

test.before(async (ctx) => {
  Object.assign(ctx, await peer.peerFolder('wd-peer-contract-'));
  const recorder = join(ctx.dir, 'recorder.mjs');
  await writeFile(recorder, RECORDER(pathToFileURL(fixture('_lib.mjs')).href));
  await chmod(recorder, 0o755);
  // Both watchdogs read the same file; only the log names differ per side, through the environment of the
  // watchdog itself (EnvironmentVariables stay identical: A and B below).
  ctx.yaml = peer.peerConfig({
    urlsPort: ctx.urlsPort,
    persist: false,
    instances: [
      {
        key: KEY,
        port: ctx.apiPort,
        runCommand: recorder,
        timeoutSeconds: TIMEOUT_S,
        env: { A_VAR: 'one', B_VAR: 'two words' },
      },
    ],
  });
  await writeFile(join(ctx.dir, 'appsettings.yml'), ctx.yaml);
});

test.after(async (ctx) => {
  for (const side of Object.values(ctx.sides)) await side.stop?.();
  const left = ctx.dir ? await peer.pidsWith(join(ctx.dir, 'instances', KEY, 'config.toml')) : [];
  for (const side of Object.values(ctx.sides)) for (const l of side.launches) left.push(l.pid);
  for (const pid of new Set(left)) peer.killPid(pid);
  await ctx.cleanup();
});

async function launches(ctx: Ctx, name: SideName, count: number): Promise<Launch[]> {
  return waitFor(
    `${name}: ${count} launch(es)`,
    async () => {
      const l = await jsonLines<Launch>(launchLog(ctx, name));
      return l.length >= count ? l : undefined;
    },
    15_000,
    50,
  );
}

for (const name of ['real', 'ours'] as const) {
  const env = (ctx: Ctx) => ({
    LAUNCH_LOG: launchLog(ctx, name),
    CONTROL_LOG: controlLog(ctx, name),
    FIXTURE_LIFETIME_MS: '120000',
  });

  test(`contract :: ${name}: launches the server once and it checks in`, async (ctx) => {
    const side: Side = { stop: null, log: () => '', launches: [], controls: [], codes: {}, hangKillMs: 0 };
    ctx.sides[name] = side;
    if (name === 'real') {
      const real = await peer.startReal(ctx.dir, base(ctx), env(ctx));
      side.stop = () => real.stop();
      side.log = real.log;
    } else {
      const ours = await startDaemon(ctx.yaml, { dir: ctx.dir, env: env(ctx) });
      side.stop = () => ours.stop();
      side.log = ours.log;
    }
    side.launches = await launches(ctx, name, 1);
    assert.is(side.launches.length, 1);
    const pingSeen =
      name === 'real'
        ? () => /Received ping from server\./.test(side.log())
        : async () => {
            const res = await fetch(`${base(ctx)}/instances/${KEY}/status`, {
              headers: { authorization: `Basic ${b64(`${KEY}:${TOKEN}`)}` },
            });
            const s = (await res.json()) as { state: string; lastCheckinAt: string | null };
            return peer.isRunningState(s.state) && s.lastCheckinAt !== null;
          };
    await waitFor(`${name}: the first check-in`, pingSeen, 10_000, 100);
  });

  test(`contract :: ${name}: control status codes`, async (ctx) => {
    const side = ctx.sides[name]!;
    const url = `${base(ctx)}/instances/${KEY}/update`;
    side.codes = {
      wrongToken: await post(url, `Basic ${b64(`${KEY}:wrong`)}`),
      none: await post(url),
      unknownKey: await post(`${base(ctx)}/instances/nosuch/update`, `Basic ${b64(`nosuch:${TOKEN}`)}`),
      userNotKey: await post(url, `Basic ${b64(`other:${TOKEN}`)}`),
      lowerCaseScheme: await post(url, `basic ${b64(`${KEY}:${TOKEN}`)}`),
      right: await post(url, `Basic ${b64(`${KEY}:${TOKEN}`)}`),
    };
    const expected = {
      wrongToken: 401,
      none: 401,
      unknownKey: 404,
      userNotKey: name === 'real' ? 500 : 403,
      // Authorised, ours refuses at once an update an instance without a provider cannot do (409); the real one
      // answers 200 and does nothing.
      lowerCaseScheme: name === 'real' ? 401 : 409,
      right: name === 'real' ? 200 : 409,
    };
    assert.equal(side.codes, expected, `${name}'s status codes`);
    // None so far; the restart test's first control request being its /shutdown is the later marker for "none
    // came late".
    assert.equal(
      await jsonLines<Control>(controlLog(ctx, name)),
      [],
      'no control request reached the server (no update provider)',
    );
    assert.is((await jsonLines<Launch>(launchLog(ctx, name))).length, 1, 'no relaunch');
    if (name === 'ours') {
      peer.difference('control with user != key: real 500 (Forbid() with no auth scheme throws), ours 403');
      peer.difference(
        'control with a lower-case "basic" scheme: real 401, ours accepts it (RFC 7617: the scheme is case-insensitive)',
      );
      peer.difference(
        'update on an instance without UpdateType: real 200 and nothing happens, ours 409 with the reason',
      );
    }
  });

  test(`contract :: ${name}: restart sends POST /shutdown with the launch's WatchdogToken and a Reason, then relaunches`, async (ctx) => {
    const side = ctx.sides[name]!;
    const first = side.launches[0]!;
    assert.is(await post(`${base(ctx)}/instances/${KEY}/restart`, `Basic ${b64(`${KEY}:${TOKEN}`)}`), 200);
    side.launches = await launches(ctx, name, 2);
    side.controls = await jsonLines<Control>(controlLog(ctx, name));
    assert.is(side.controls.length, 1, 'one control request');
    const c = side.controls[0]!;
    assert.equal([c.pid, c.method, c.path], [first.pid, 'POST', '/shutdown']);
    assert.is(c.token, first.env.ROBUST_CVAR_watchdog__token, "WatchdogToken is the token in the server's environment");
    const reason = (JSON.parse(c.body) as { Reason?: unknown }).Reason;
    assert.type(reason, 'string');
    if (name === 'real') {
      assert.is(reason, REAL_REASON);
      assert.is(c.contentType, 'text/plain; charset=utf-8', 'the real watchdog posts JSON as StringContent');
    } else {
      assert.is(reason, 'Restart requested by the watchdog', 'ours names the cause');
      assert.is(c.contentType, 'application/json');
      peer.difference(
        `restart: /shutdown Reason is "${String(reason)}" (ours) vs "${REAL_REASON}" (real); content-type ${c.contentType} (ours) vs ${ctx.sides.real?.controls[0]?.contentType} (real)`,
      );
    }
    await waitFor(`${name}: the first server gone`, async () => !(await running(first.pid)), 10_000, 50);
    const second = side.launches[1]!;
    assert.is.not(second.pid, first.pid);
    assert.is.not(
      second.env.ROBUST_CVAR_watchdog__token,
      first.env.ROBUST_CVAR_watchdog__token,
      'a new token per launch',
    );
    assert.equal(second.argv, first.argv, 'the same argv at the relaunch');
  });

  test(`contract :: ${name}: a check-in with the previous launch's token, or a wrong one, is 401; the current one is 200`, async (ctx) => {
    const side = ctx.sides[name]!;
    const [first, second] = [side.launches[0]!, side.launches[1]!];
    const ping = (token: string) => post(`${base(ctx)}/server_api/${KEY}/ping`, `Basic ${b64(`${KEY}:${token}`)}`);
    assert.is(await ping(first.env.ROBUST_CVAR_watchdog__token!), 401, "previous launch's token");
    assert.is(await ping('d3Jvbmc='), 401, 'a wrong token');
    assert.is(await ping(second.env.ROBUST_CVAR_watchdog__token!), 200, 'the current token');
  });

  test(`contract :: ${name}: a server that stops checking in (SIGSTOP) is killed about TimeoutSeconds later and relaunched`, async (ctx) => {
    const side = ctx.sides[name]!;
    const hung = side.launches[1]!;
    await moreCheckins(ctx, name, 2); // the current launch checks in: frozen right after a check-in
    assert.ok(await running(hung.pid));
    process.kill(hung.pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    await waitFor(
      `${name}: the hung server killed`,
      async () => !(await running(hung.pid)),
      (TIMEOUT_S + 10) * 1000,
      25,
    );
    side.hangKillMs = Date.now() - stoppedAt;
    // Not before its deadline: the last check-in came just before SIGSTOP (seen then, so at most the observation's
    // lag earlier), and a timer never fires early. The upper bound only catches a kill that never really came.
    assert.ok(
      side.hangKillMs >= TIMEOUT_S * 1000 - 1000 && side.hangKillMs <= TIMEOUT_S * 1000 + 10_000,
      `${name} killed the hung server ${side.hangKillMs} ms after SIGSTOP (TimeoutSeconds ${TIMEOUT_S})`,
    );
    side.launches = await launches(ctx, name, 3);
    assert.is(side.launches.length, 3, 'relaunched once');
  });

  test(`contract :: ${name}: stop sends POST /update with the token; the server exits and stays down`, async (ctx) => {
    const side = ctx.sides[name]!;
    const current = side.launches[2]!;
    await waitFor(
      `${name}: the relaunched server answers`,
      async () => (await fetch(`http://127.0.0.1:${ctx.apiPort}/status`)).ok,
      10_000,
      50,
    );
    await moreCheckins(ctx, name, 1); // running: it has checked in
    assert.is(await post(`${base(ctx)}/instances/${KEY}/stop`, `Basic ${b64(`${KEY}:${TOKEN}`)}`), 200);
    const controls = await waitFor(
      `${name}: /update received`,
      async () => {
        const l = await jsonLines<Control>(controlLog(ctx, name));
        return l.length >= 2 ? l : undefined;
      },
      10_000,
      50,
    );
    const c = controls[1]!;
    assert.equal(
      [c.pid, c.method, c.path, c.token],
      [current.pid, 'POST', '/update', current.env.ROBUST_CVAR_watchdog__token],
    );
    assert.is(c.body, '', 'no body');
    side.controls = controls;
    await waitFor(`${name}: the server exits`, async () => !(await running(current.pid)), 10_000, 50);
    assert.is(await side.stop!(), 0, `${name} exits 0 on SIGTERM`);
    side.stop = null;
    // The later marker is the watchdog's exit: in all the rest of its life, no relaunch.
    assert.is((await jsonLines<Launch>(launchLog(ctx, name))).length, 3, 'not relaunched after stop');
  });
}

test('contract :: the launches are identical: argv, cwd, the 64-byte token, EnvironmentVariables', async (ctx) => {
  const real = ctx.sides.real!.launches[0]!;
  const ours = ctx.sides.ours!.launches[0]!;
  const instance = join(ctx.dir, 'instances', KEY);
  assert.equal(
    real.argv,
    [
      '--cvar',
      `watchdog.key=${KEY}`,
      '--cvar',
      `watchdog.baseUrl=http://localhost:${ctx.urlsPort}`,
      '--config-file',
      join(instance, 'config.toml'),
      '--data-dir',
      join(instance, 'data'),
      '--cvar',
      `net.port=${ctx.apiPort}`,
      '--cvar',
      'watchdog.checkin_interval=0.3',
    ],
    "the real watchdog's argv, as established",
  );
  assert.equal(ours.argv, real.argv, 'argv identical');
  assert.is(ours.cwd, real.cwd, 'cwd identical');
  assert.is(real.cwd, instance);
  for (const l of [real, ours]) {
    const token = l.env.ROBUST_CVAR_watchdog__token ?? '';
    assert.match(token, /^[A-Za-z0-9+/]+={0,2}$/, 'base64');
    assert.is(Buffer.from(token, 'base64').length, 64, '64 bytes');
    assert.equal([l.env.A_VAR, l.env.B_VAR], ['one', 'two words'], 'EnvironmentVariables');
  }
  assert.is.not(ours.env.ROBUST_CVAR_watchdog__token, real.env.ROBUST_CVAR_watchdog__token);
  const [r, o] = [ctx.sides.real!, ctx.sides.ours!];
  console.log(
    `peer: hang kill after SIGSTOP: real ${r.hangKillMs} ms, ours ${o.hangKillMs} ms (TimeoutSeconds ${TIMEOUT_S})`,
  );
});

test.run();
