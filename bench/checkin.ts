/**
 * 2. Check-in throughput: autocannon (in this process) against POST /server_api/<key>/ping with the live check-in
 * secret of one of 10 supervised light servers, versus a bare node:http server doing the same Basic check. Runs
 * alternate (bare, watchdog, bare, watchdog) after a warm-up of each, so load drift hits both alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { instanceKeys, lightConfig, TOKEN } from './lib/config.ts';
import { profileText, summarizeProfile } from './lib/cpu-profile.ts';
import { type BenchDaemon, healthStates, instanceStatus, startDaemon } from './lib/daemon.ts';
import { BENCH, freePorts, tempDir } from './lib/env.ts';
import { installServer } from './lib/launcher.ts';
import { CLK_TCK, readCpuTicks, readEnvironVar, signal } from './lib/proc.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { PEER_NAME, type Peer, peerExe, peerServer, skippedLine, startPeer } from './lib/ss14.ts';
import { median } from './lib/stats.ts';
import { waitFor, wallNow } from './lib/wait.ts';

const CONNECTIONS = 50;
/** utime of the process (all threads), in clock ticks. */
function readUserTicks(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const v = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[11]);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

/** Alternating rounds; figures are medians over them, so one round hit by someone else's load spike does not decide. */
const ROUNDS = 4;
const INSTANCES = 10;
const TOKEN_ENV = 'ROBUST_CVAR_watchdog__token';

interface Load {
  url: string;
  auth: string;
}

function cannon(load: Load, seconds: number): Promise<Result> {
  return autocannon({
    url: load.url,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    headers: { authorization: load.auth, 'content-length': '0' },
    timeout: 10,
  });
}

async function startBaseline(file: string, secret: string): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [join(BENCH, 'baselines', file)], {
    env: { ...process.env, BENCH_SECRET: secret },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const port = await waitFor(`${file} to listen`, () => /listening (\d+)/.exec(out)?.[1], 15_000);
  return { proc, url: `http://127.0.0.1:${port}` };
}

async function superviseTen(
  dir: string,
  script: string,
  nodeArgs: string[] = [],
): Promise<{ daemon: BenchDaemon; keys: string[]; secret: string }> {
  const keys = instanceKeys(INSTANCES);
  const ports = await freePorts(INSTANCES);
  const daemon = await startDaemon(
    dir,
    lightConfig({
      script,
      instances: keys.map((key, i) => ({ key, port: ports[i] as number })),
      checkinSeconds: 1,
      timeoutSeconds: 5,
    }),
    { nodeArgs },
  );
  await waitFor(
    'all 10 instances running',
    async () => {
      const states = await healthStates(daemon.url);
      return keys.every((k) => states[k] === 'server.running');
    },
    60_000,
    100,
  );
  const pid = (await instanceStatus(daemon.url, keys[0] as string, TOKEN)).pid;
  const secret = pid === null ? null : readEnvironVar(pid, TOKEN_ENV);
  if (!secret) throw new Error(`could not read ${TOKEN_ENV} of the server of ${keys[0]} (pid ${pid})`);
  return { daemon, keys, secret };
}

const restartsOf = async (daemon: BenchDaemon, keys: string[]) =>
  Promise.all(keys.map(async (k) => (await instanceStatus(daemon.url, k, TOKEN)).restarts));

export async function runCheckin(opts: { seconds: number }): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const tmp = await tempDir('wd-bench-checkin-');
  const daemons: BenchDaemon[] = [];
  const baselines: ChildProcess[] = [];
  const figures: Figure[] = [];
  const notes: string[] = [];
  let peer: Peer | null = null;
  try {
    const script = await installServer('light-server.mjs', tmp.path);
    const { daemon, keys, secret } = await superviseTen(join(tmp.path, ''), script);
    daemons.push(daemon);
    const key = keys[0] as string;
    const auth = `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;
    const b = await startBaseline('bare-auth-server.mjs', secret);
    baselines.push(b.proc);
    const h = await startBaseline('hono-auth-server.mjs', secret);
    baselines.push(h.proc);
    const path = `/server_api/${key}/ping`;
    const wd: Load = { url: `${daemon.url}${path}`, auth };
    const bl: Load = { url: `${b.url}${path}`, auth };
    const hl: Load = { url: `${h.url}${path}`, auth };

    // The real SS14.Watchdog with the same 10 light servers; its check-in secret is generated per launch, read from
    // the environment of its server for `key` (a child with --cvar watchdog.key=<key>).
    let rl: Load | null = null;
    const built = await peerExe();
    if ('exe' in built) {
      const [peerPort, ...apiPorts] = (await freePorts(INSTANCES + 1)) as number[];
      const peerDir = join(tmp.path, 'ss14');
      await mkdir(peerDir);
      peer = await startPeer(
        built.exe,
        peerDir,
        peerPort as number,
        keys.map((k, i) => ({
          key: k,
          token: TOKEN,
          apiPort: apiPorts[i] as number,
          runCommand: script,
          timeoutSeconds: 5,
          arguments: ['--cvar', `net.port=${apiPorts[i]}`, '--cvar', 'watchdog.checkin_interval=1'],
        })),
      );
      const p = peer;
      const server = await waitFor(`the ${PEER_NAME}'s server for ${key}`, () => peerServer(p.pid, key), 30_000, 100);
      rl = { url: `${peer.url}${path}`, auth: `Basic ${Buffer.from(`${key}:${server.secret}`).toString('base64')}` };
      const probe = await fetch(rl.url, { method: 'POST', headers: { authorization: rl.auth } });
      await probe.arrayBuffer();
      if (probe.status !== 200)
        throw new Error(`${PEER_NAME}: POST ${path} with its server's secret answered ${probe.status}`);
      // All 10 of its servers up (their pids stay the same through the run unless it relaunches one).
      await waitFor(
        `the ${PEER_NAME}'s ${INSTANCES} servers`,
        () => keys.every((k) => peerServer(p.pid, k)),
        30_000,
        100,
      );
    } else {
      notes.push(skippedLine(built.skipped));
    }
    const peerPidsBefore = peer ? keys.map((k) => peerServer((peer as Peer).pid, k)?.pid ?? 0) : [];

    const restartsBefore = await restartsOf(daemon, keys);
    const logBefore = daemon.log().length;
    await cannon(bl, 2);
    await cannon(hl, 2);
    await cannon(wd, 2);
    if (rl) await cannon(rl, 2);
    const half = Math.max(1, Math.round(opts.seconds / ROUNDS));
    // CPU of the server process under load (all its threads: Kestrel's thread pool as well as Node's main thread
    // and libuv/GC threads): ms of CPU per 1000 answered requests, and its share of one core over the run.
    const cpu: Record<string, Array<{ perK: number; userPerK: number; cores: number }>> = {
      bare: [],
      hono: [],
      wd: [],
      real: [],
    };
    const timed = async (name: string, pid: number, run: () => Promise<Result>): Promise<Result> => {
      const t0 = readCpuTicks(pid);
      const u0 = readUserTicks(pid);
      const w0 = performance.now();
      const r = await run();
      const t1 = readCpuTicks(pid);
      const u1 = readUserTicks(pid);
      const wall = performance.now() - w0;
      if (t0 !== null && t1 !== null && u0 !== null && u1 !== null) {
        const ms = ((t1 - t0) * 1000) / CLK_TCK;
        const userMs = ((u1 - u0) * 1000) / CLK_TCK;
        const answered = r['2xx'] + r.non2xx;
        cpu[name]?.push({
          perK: answered ? (ms / answered) * 1000 : NaN,
          userPerK: answered ? (userMs / answered) * 1000 : NaN,
          cores: ms / wall,
        });
      }
      return r;
    };
    const runs: Record<'bare' | 'hono' | 'wd' | 'real', Result[]> = { bare: [], hono: [], wd: [], real: [] };
    for (let r = 0; r < ROUNDS; r++) {
      runs.bare.push(await timed('bare', b.proc.pid as number, () => cannon(bl, half)));
      runs.hono.push(await timed('hono', h.proc.pid as number, () => cannon(hl, half)));
      runs.wd.push(await timed('wd', daemon.pid, () => cannon(wd, half)));
      if (rl && peer) runs.real.push(await timed('real', peer.pid, () => cannon(rl as Load, half)));
    }
    const peerPidsAfter = peer ? keys.map((k) => peerServer((peer as Peer).pid, k)?.pid ?? 0) : [];
    const restartsAfter = await restartsOf(daemon, keys);
    const states = await healthStates(daemon.url);
    const newLog = daemon.log().slice(logBefore);
    const hangLines = newLog
      .split('\n')
      .filter((l) => /timed out and will be killed|state restarting|server launched/.test(l));

    const agg = (rs: Result[]) => {
      return {
        rps: median(rs.map((r) => (r['2xx'] + r.non2xx) / r.duration)),
        p99: median(rs.map((r) => r.latency.p99)),
        p99s: rs.map((r) => r.latency.p99),
        rpss: rs.map((r) => (r['2xx'] + r.non2xx) / r.duration),
        p50: median(rs.map((r) => r.latency.p50)),
        errors: rs.reduce((a, r) => a + r.errors + r.timeouts + r.non2xx, 0),
        ok: rs.reduce((a, r) => a + r['2xx'], 0),
      };
    };
    const w = agg(runs.wd);
    const bb = agg(runs.bare);
    const hh = agg(runs.hono);
    const rr = rl ? agg(runs.real) : null;
    const both = (pick: (x: typeof w) => number) => [
      { name: 'bare node:http', value: pick(bb) },
      { name: 'plain Hono app', value: pick(hh) },
      ...(rr ? [{ name: PEER_NAME, value: pick(rr) }] : []),
    ];
    const falseTimeouts = restartsAfter.reduce((a, n, i) => a + n - (restartsBefore[i] ?? 0), 0) + hangLines.length;
    figures.push(
      figure({
        name: 'requests/s',
        value: w.rps,
        unit: 'req/s',
        baselines: both((x) => x.rps),
        target: '≥ 0.65× bare',
        met: w.rps >= 0.65 * bb.rps,
        note:
          w.rps < 0.65 * bb.rps
            ? `${(w.rps / bb.rps).toFixed(2)}× bare, ${(((0.65 - w.rps / bb.rps) / 0.65) * 100).toFixed(0)}% short`
            : undefined,
      }),
      figure({
        name: `latency p99 at ${CONNECTIONS} connections (median run)`,
        value: w.p99,
        unit: 'ms',
        baselines: both((x) => x.p99),
        target: '< 10 ms',
        met: w.p99 < 10,
        note: w.p99 >= 10 ? `${(w.p99 - 10).toFixed(1)} ms over` : undefined,
      }),
      figure({ name: 'latency p50', value: w.p50, unit: 'ms', baselines: both((x) => x.p50) }),
      figure({
        name: 'errors (non-2xx + socket errors + timeouts)',
        value: w.errors,
        unit: '',
        baselines: both((x) => x.errors),
        target: '0',
        met: w.errors === 0,
      }),
      figure({
        name: 'instances falsely timed out or relaunched',
        value: falseTimeouts,
        unit: '',
        target: '0 (restarts unchanged, no hang line, all 10 still running)',
        met: falseTimeouts === 0 && keys.every((k) => states[k] === 'server.running'),
      }),
    );
    const cpuOf = (name: string) => ({
      perK: median((cpu[name] ?? []).map((c) => c.perK)),
      userPerK: median((cpu[name] ?? []).map((c) => c.userPerK)),
      cores: median((cpu[name] ?? []).map((c) => c.cores)),
    });
    const cw = cpuOf('wd');
    const cb = cpuOf('bare');
    const ch = cpuOf('hono');
    const cr = cpuOf('real');
    figures.push(
      figure({
        name: 'server CPU per 1000 check-ins (all threads)',
        value: cw.perK,
        unit: 'ms',
        baselines: [
          { name: 'bare node:http', value: cb.perK },
          { name: 'plain Hono app', value: ch.perK },
          ...(rr ? [{ name: PEER_NAME, value: cr.perK }] : []),
        ],
      }),
      figure({
        name: 'server CPU under load, cores busy (1.0 = one core)',
        value: cw.cores,
        unit: '',
        baselines: [
          { name: 'bare node:http', value: cb.cores },
          { name: 'plain Hono app', value: ch.cores },
          ...(rr ? [{ name: PEER_NAME, value: cr.cores }] : []),
        ],
      }),
    );
    notes.push(
      `Server CPU per 1000 check-ins (median over the rounds), user / kernel ms: ours ${cw.userPerK.toFixed(0)} / ${(cw.perK - cw.userPerK).toFixed(0)}; bare node:http ${cb.userPerK.toFixed(0)} / ${(cb.perK - cb.userPerK).toFixed(0)}; plain Hono ${ch.userPerK.toFixed(0)} / ${(ch.perK - ch.userPerK).toFixed(0)}${rr ? `; ${PEER_NAME} ${cr.userPerK.toFixed(0)} / ${(cr.perK - cr.userPerK).toFixed(0)}` : ''}. From /proc/<pid>/stat utime and stime of the server process (all its threads) before and after each autocannon run.`,
    );
    if (rr) {
      const relaunched = peerPidsAfter.filter((pid, i) => pid !== peerPidsBefore[i]).length;
      figures.push(
        figure({
          name: `${PEER_NAME}: requests/s`,
          value: rr.rps,
          unit: 'req/s',
          baselines: [
            { name: 'bare node:http', value: bb.rps },
            { name: 'ours', value: w.rps },
          ],
        }),
        figure({
          name: `${PEER_NAME}: latency p99 (median run)`,
          value: rr.p99,
          unit: 'ms',
          baselines: [
            { name: 'bare node:http', value: bb.p99 },
            { name: 'ours', value: w.p99 },
          ],
        }),
        figure({ name: `${PEER_NAME}: errors`, value: rr.errors, unit: '' }),
        figure({ name: `${PEER_NAME}: servers relaunched during the run`, value: relaunched, unit: '' }),
      );
      if (w.rps < rr.rps) {
        const stack =
          cb.perK >= cr.perK
            ? `Node's HTTP stack alone (bare node:http) costs ${(cb.perK / cr.perK).toFixed(2)}× the real one's Kestrel per request`
            : `bare node:http costs ${(cb.perK / cr.perK).toFixed(2)}× the real one's Kestrel per request, so the stack is not the gap here`;
        notes.push(
          `Ours is behind the real watchdog here: ${w.rps.toFixed(0)} vs ${rr.rps.toFixed(0)} req/s (${(w.rps / rr.rps).toFixed(2)}×). Per 1000 check-ins the server process used ${cw.perK.toFixed(0)} ms of CPU (ours), ${cb.perK.toFixed(0)} ms (bare node:http), ${ch.perK.toFixed(0)} ms (plain Hono) and ${cr.perK.toFixed(0)} ms (real), with ${cw.cores.toFixed(2)} / ${cb.cores.toFixed(2)} / ${ch.cores.toFixed(2)} / ${cr.cores.toFixed(2)} cores busy. Why: (1) ${stack}; (2) ours spends ${(cw.perK - cb.perK).toFixed(0)} ms per 1000 more than bare node:http (${((cw.perK / cb.perK - 1) * 100).toFixed(0)}%: the daemon's own work per check-in, i.e. Basic decode, one SHA-256 of the given secret for the constant-time compare, recording the check-in and its event, plus the rest of a live daemon with 10 instances; the profile below splits it, where writeLatin1String is the socket write every node:http server pays); (3) Kestrel runs requests on a thread pool and took ${cr.cores.toFixed(2)} cores against ours's ${cw.cores.toFixed(2)}, while a Node server has one JS thread (autocannon shares the 2 cores). The per-request CPU figures move by 30 % or more from run to run on this shared machine; compare them within a run only.`,
        );
      }
      notes.push(
        `${PEER_NAME} (bench/peers/ss14-watchdog, Serilog at Warning) supervising the same 10 light servers (check-in every 1 s, TimeoutSeconds 5), loaded in the same rounds right after ours with the same autocannon settings and the live secret of its \`${key}\` (a new random one per launch, read from that server's /proc/<pid>/environ). Per round — req/s: ${rr.rpss.map((x) => x.toFixed(0)).join(', ')}; p99 (ms): ${rr.p99s.join(', ')}; ${rr.ok} answers 2xx. Relaunched = its servers whose pid changed between before and after the rounds.`,
      );
    }
    notes.push(
      `autocannon ${CONNECTIONS} connections, POST ${path} with the live check-in secret of \`${key}\` (read from /proc/<pid>/environ, ${TOKEN_ENV}); 2 s warm-up each, then ${ROUNDS} alternating rounds of ${half} s runs (bare, Hono, watchdog, bare, …). Each figure is the median over the rounds. Per round — req/s: watchdog ${w.rpss.map((x) => x.toFixed(0)).join(', ')}; Hono ${hh.rpss.map((x) => x.toFixed(0)).join(', ')}; bare ${bb.rpss.map((x) => x.toFixed(0)).join(', ')}. p99 (ms): watchdog ${w.p99s.join(', ')}; Hono ${hh.p99s.join(', ')}; bare ${bb.p99s.join(', ')}.`,
      "Two baselines: a bare node:http server (bench/baselines/bare-auth-server.mjs) and a plain Hono app on @hono/node-server with the same route and check and nothing behind it (hono-auth-server.mjs), which splits the gap into the HTTP framework's share and the daemon's own (statechart, bus, registry). The daemon answers every check-in through its Hono app, as the plain Hono baseline does, plus its statechart, bus and registry.",
      `The daemon supervises ${INSTANCES} light servers (bench/servers/light-server.mjs) that check in every 1 s with TimeoutSeconds 5, so a daemon too busy to take their check-ins would time them out during the run.`,
      `Watchdog: ${w.ok} answers 2xx; Hono: ${hh.ok}; bare: ${bb.ok}. autocannon runs in the bench process on the same 2 cores as the server under test, for both.`,
    );

    // When the ratio misses (or ours is behind the real watchdog), profile the daemon under the same load to say where its time goes.
    if (w.rps < 0.65 * bb.rps || (rr !== null && w.rps < rr.rps) || process.env.BENCH_PROFILE === '1') {
      await daemon.stop(15_000);
      const profDir = join(tmp.path, 'prof');
      const second = await superviseTen(join(tmp.path, ''), script, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
      daemons.push(second.daemon);
      const load2 = {
        url: `${second.daemon.url}${path.replace(key, second.keys[0] as string)}`,
        auth: `Basic ${Buffer.from(`${second.keys[0]}:${second.secret}`).toString('base64')}`,
      };
      const fromMs = wallNow() - second.daemon.spawnedAt;
      const profiled = await cannon(load2, 5);
      const toMs = wallNow() - second.daemon.spawnedAt;
      await second.daemon.stop(15_000);
      // Only the samples taken under load (the profile starts with the process, give or take its boot).
      const summary = await summarizeProfile(profDir, { fromMs, toMs });
      if (summary)
        notes.push(
          `CPU profile of the daemon (\`node --cpu-prof bin/watchdog start\`) under the same load, ${Math.round(profiled.requests.average)} req/s while profiled, samples of the load window only: ${profileText(summary)}`,
        );
    }
    return {
      id: 'checkin',
      title: '2. Check-in throughput',
      figures,
      notes,
      commands: [
        `watchdog: bin/watchdog start with ${INSTANCES} light instances; autocannon({ url, connections: ${CONNECTIONS}, duration: ${half}, method: 'POST', headers: { authorization } })`,
        'bare: node bench/baselines/bare-auth-server.mjs (BENCH_SECRET in its environment), same autocannon call',
        'Hono: node bench/baselines/hono-auth-server.mjs (BENCH_SECRET in its environment), same autocannon call',
        `${PEER_NAME}: "$(bash bench/peers/ss14-watchdog/build.sh)" in a temp folder, appsettings.yml with the same ${INSTANCES} light instances; same autocannon call`,
      ],
    };
  } finally {
    for (const d of daemons) await d.stop(15_000);
    if (peer) await peer.stop(15_000);
    for (const p of baselines) if (p.pid) signal(p.pid, 'SIGTERM');
    await tmp.cleanup();
  }
}
