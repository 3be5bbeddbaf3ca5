/**
 * 4. Scale: N (200) light servers checking in every second, each with its own ApiPort, under one supervisor: the
 * watchdog, and as the floor a minimal supervisor in one plain Node file (bench/baselines/mini-supervisor.mjs) doing
 * the same job (spawn with pipes, Basic check-ins, hang timers, relaunch). Run one after the other (400 servers at
 * once would not be a fair load), the floor first. For each: time from spawn to all N running, RSS and CPU over a
 * steady window, event-loop lag (an instrument loaded with --import), GET /health latency, and hang detection:
 * SIGSTOP 20 servers, each must be killed within TimeoutSeconds + 1 s.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { instanceKeys, lightConfig, TOKEN } from './lib/config.ts';
import { instanceStatus, startDaemon } from './lib/daemon.ts';
import { BENCH, freePorts, tempDir } from './lib/env.ts';
import { installServer } from './lib/launcher.ts';
import { CLK_TCK, isAlive, readCpuTicks, readMemory, signal } from './lib/proc.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { mergedPercentile, type Summary, summarize } from './lib/stats.ts';
import { sleep, waitFor, wallNow } from './lib/wait.ts';

const MB = 1 << 20;
const CHECKIN_SECONDS = 1;
/** TimeoutSeconds for the hang check. */
const TIMEOUT_SECONDS = 5;
/**
 * TimeoutSeconds while the servers start: 200 Node processes starting at once on 2 cores take over 10 s to all be
 * up even with no supervisor, and a supervisor also applies TimeoutSeconds to the first check-in, so 5 s there would
 * kill servers still starting and relaunch them in a storm. The timeout is lowered to 5 s (config reload) before
 * the hang check.
 */
const STARTUP_TIMEOUT_SECONDS = 60;
const WINDOW_MS = 15_000;
const INSTRUMENT = join(BENCH, 'instrument/loop-lag.mjs');

interface Subject {
  name: string;
  pid: number;
  url: string;
  spawnedAt: number;
  lagFile: string;
  pidsOf(keys: string[]): Promise<Map<string, number>>;
  /** Hang kills the supervisor reported so far. */
  hangKills(): number;
  /** The supervisor's own event-loop lag since the previous call (ms), when it exposes one (the daemon's /metrics). */
  ownLag?(): Promise<{ p99: number; max: number } | null>;
  /** Lowers TimeoutSeconds for every instance (config reload); resolves once the supervisor took it. */
  setTimeoutSeconds(seconds: number): Promise<void>;
  stop(): Promise<void>;
}

interface Measured {
  allRunningS: number;
  rss: Summary;
  cpuShare: number;
  lagP99: number;
  lagP99Max: number;
  lagMax: number;
  healthLatency: Summary;
  hangDetect: number[];
  hangOnTime: number;
  falseKills: number;
  frozen: number;
  /** The supervisor's own lag figures over the window, when it has them. */
  ownLag: { p99: number; max: number } | null;
  /** 1-minute load average at the start and end of the steady window. */
  load: [number, number];
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** GET <url>/health on a kept-alive connection; resolves with the round-trip in ms and the parsed body. */
function getHealth(url: string): Promise<{ ms: number; body: { instances: Record<string, string> } }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(`${url}/health`, { agent: keepAlive, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({
            ms: performance.now() - t0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { instances: Record<string, string> },
          });
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('GET /health timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function measure(s: Subject, keys: string[], frozenCount: number): Promise<Measured> {
  let lastWaiting = '';
  const all = await waitFor(
    `all ${keys.length} ${s.name} instances running`,
    async () => {
      // A relaunch storm must not be left to grow on a shared machine.
      if (s.hangKills() > keys.length / 10)
        throw new Error(
          `${s.hangKills()} servers killed for not checking in while starting (relaunch storm); giving up`,
        );
      const { body } = await getHealth(s.url);
      const waiting = keys.filter((k) => body.instances[k] !== 'server.running');
      lastWaiting = waiting.length
        ? `${waiting.length} not running yet (${waiting
            .slice(0, 5)
            .map((k) => `${k}: ${body.instances[k]}`)
            .join(', ')})`
        : '';
      return waiting.length === 0 ? wallNow() : null;
    },
    120_000,
    100,
  ).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; ${lastWaiting}`, { cause: err });
  });
  const allRunningS = (all - s.spawnedAt) / 1000;

  // Steady state: RSS every 500 ms, CPU ticks at both ends, /health latency every 100 ms, lag lines in the window.
  await sleep(2000);
  const load0 = loadavg()[0] as number;
  await s.ownLag?.(); // starts the supervisor's own lag histogram afresh
  const from = wallNow();
  const ticks0 = readCpuTicks(s.pid) ?? 0;
  const rss: number[] = [];
  const health: number[] = [];
  const end = Date.now() + WINDOW_MS;
  let n = 0;
  while (Date.now() < end && n++ < WINDOW_MS / 100 + 10) {
    if (n % 5 === 0) {
      const m = readMemory(s.pid);
      if (m) rss.push(m.rss / MB);
    }
    health.push((await getHealth(s.url)).ms);
    await sleep(100);
  }
  const ticks1 = readCpuTicks(s.pid) ?? 0;
  const to = wallNow();
  const load1 = loadavg()[0] as number;
  const ownLag = (await s.ownLag?.()) ?? null;
  const cpuShare = (ticks1 - ticks0) / CLK_TCK / ((to - from) / 1000);
  const lag = readFileSync(s.lagFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { at: number; p99: number; max: number; n: number; cdf: Array<[number, number]> })
    .filter((l) => l.at > from + 1000 && l.at <= to);
  const p99s = summarize(lag.map((l) => l.p99));

  // Hang detection: TimeoutSeconds down to 5, a few check-in rounds so every timer is armed with it, then freeze every
  // (N / frozen)-th server; each must be gone within TimeoutSeconds + 1 s.
  await s.setTimeoutSeconds(TIMEOUT_SECONDS);
  await sleep(3 * CHECKIN_SECONDS * 1000);
  const step = Math.max(1, Math.floor(keys.length / frozenCount));
  const victims = keys.filter((_, i) => i % step === 0).slice(0, frozenCount);
  const pids = await s.pidsOf(victims);
  const killsBefore = s.hangKills();
  const stoppedAt = new Map<number, number>();
  for (const pid of pids.values()) {
    if (signal(pid, 'SIGSTOP')) stoppedAt.set(pid, wallNow());
  }
  const goneAt = new Map<number, number>();
  const deadline = Date.now() + (TIMEOUT_SECONDS + 8) * 1000;
  while (goneAt.size < stoppedAt.size && Date.now() < deadline) {
    for (const pid of stoppedAt.keys()) if (!goneAt.has(pid) && !isAlive(pid)) goneAt.set(pid, wallNow());
    await sleep(20);
  }
  const hangDetect = [...stoppedAt].map(([pid, at]) => ((goneAt.get(pid) ?? Infinity) - at) / 1000);
  // Give late false kills a moment to show, then count kills beyond the frozen ones.
  await sleep(1500);
  const falseKills = Math.max(0, s.hangKills() - killsBefore - stoppedAt.size);
  // Whatever is still frozen (a missed hang) is the bench's to kill.
  for (const pid of stoppedAt.keys()) if (isAlive(pid)) signal(pid, 'SIGKILL');
  return {
    allRunningS,
    rss: summarize(rss),
    cpuShare,
    lagP99: mergedPercentile(lag, 99),
    lagP99Max: p99s.max,
    lagMax: Math.max(...lag.map((l) => l.max)),
    healthLatency: summarize(health),
    hangDetect,
    hangOnTime: hangDetect.filter((d) => d <= TIMEOUT_SECONDS + 1).length,
    falseKills,
    frozen: stoppedAt.size,
    load: [load0, load1],
    ownLag,
  };
}

async function startFloor(
  dir: string,
  script: string,
  instances: Array<{ key: string; port: number }>,
): Promise<Subject & { proc: ChildProcess }> {
  const configFile = join(dir, 'mini.json');
  const write = (timeoutSeconds: number) =>
    writeFile(configFile, JSON.stringify({ script, checkinSeconds: CHECKIN_SECONDS, timeoutSeconds, instances }));
  await write(STARTUP_TIMEOUT_SECONDS);
  const lagFile = join(dir, 'lag-floor.jsonl');
  const spawnedAt = wallNow();
  const proc = spawn(
    process.execPath,
    ['--import', INSTRUMENT, join(BENCH, 'baselines/mini-supervisor.mjs'), configFile],
    {
      env: { ...process.env, BENCH_LAG_FILE: lagFile },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const url = await waitFor('the mini supervisor to listen', () => /listening on (\S+)/.exec(out)?.[1], 30_000);
  const pid = proc.pid as number;
  return {
    name: 'floor',
    pid,
    url,
    spawnedAt,
    lagFile,
    proc,
    async pidsOf(keys) {
      const res = await fetch(`${url}/pids`);
      const all = (await res.json()) as Record<string, number | null>;
      return new Map(keys.flatMap((k) => (all[k] ? [[k, all[k] as number]] : [])));
    },
    hangKills: () => (out.match(/^hang /gm) ?? []).length,
    async setTimeoutSeconds(seconds) {
      await write(seconds);
      const before = (out.match(/^reloaded$/gm) ?? []).length;
      signal(pid, 'SIGHUP');
      await waitFor(
        'the mini supervisor to reload',
        () => (out.match(/^reloaded$/gm) ?? []).length > before,
        10_000,
        20,
      );
    },
    async stop() {
      signal(pid, 'SIGTERM');
      await waitFor('the mini supervisor to exit', () => !isAlive(pid), 30_000, 50).catch(() => signal(pid, 'SIGKILL'));
    },
  };
}

async function startWatchdog(
  dir: string,
  script: string,
  instances: Array<{ key: string; port: number }>,
): Promise<Subject> {
  const lagFile = join(dir, 'lag-watchdog.jsonl');
  const wdDir = join(dir, 'wd');
  await mkdir(wdDir);
  const yaml = (timeoutSeconds: number) =>
    lightConfig({ script, instances, checkinSeconds: CHECKIN_SECONDS, timeoutSeconds });
  const d = await startDaemon(wdDir, yaml(STARTUP_TIMEOUT_SECONDS), {
    nodeArgs: ['--import', INSTRUMENT],
    env: { BENCH_LAG_FILE: lagFile },
  });
  return {
    name: 'watchdog',
    pid: d.pid,
    url: d.url,
    spawnedAt: d.spawnedAt,
    lagFile,
    async pidsOf(keys) {
      const out = new Map<string, number>();
      for (const k of keys) {
        const pid = (await instanceStatus(d.url, k, TOKEN)).pid;
        if (pid) out.set(k, pid);
      }
      return out;
    },
    hangKills: () => (d.log().match(/timed out and will be killed/g) ?? []).length,
    async ownLag() {
      // GET /metrics (loopback clients need no admin credentials) resets the lag histogram on every scrape.
      const res = await fetch(`${d.url}/metrics`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
      if (!res?.ok) return null;
      const text = await res.text();
      const gauge = (name: string) => Number(new RegExp(`^${name} ([0-9.eE+-]+)$`, 'm').exec(text)?.[1]) * 1000;
      const p99 = gauge('watchdog_event_loop_lag_p99_seconds');
      return Number.isFinite(p99) ? { p99, max: gauge('watchdog_event_loop_lag_max_seconds') } : null;
    },
    async setTimeoutSeconds(seconds) {
      // The daemon reloads appsettings.yml when it changes (and on SIGHUP, sent if the watcher stays quiet).
      const reloaded = d.waitForLine(/configuration reloaded/, 15_000);
      await writeFile(join(wdDir, 'appsettings.yml'), yaml(seconds));
      const quiet = setTimeout(() => signal(d.pid, 'SIGHUP'), 3000);
      try {
        await reloaded;
      } finally {
        clearTimeout(quiet);
      }
    },
    async stop() {
      await d.stop(60_000);
    },
  };
}

export async function runScale(opts: {
  instances: number;
  frozen: number;
}): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const tmp = await tempDir('wd-bench-scale-');
  const live: Subject[] = [];
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    const script = await installServer('light-server.mjs', tmp.path);
    const keys = instanceKeys(opts.instances);
    const ports = await freePorts(opts.instances);
    const instances = keys.map((key, i) => ({ key, port: ports[i] as number }));

    const floor = await startFloor(tmp.path, script, instances);
    live.push(floor);
    const f = await measure(floor, keys, opts.frozen);
    await floor.stop();
    live.pop();
    await sleep(3000); // the floor's servers are gone (group-killed); let the machine settle

    const wd = await startWatchdog(tmp.path, script, instances);
    live.push(wd);
    const w = await measure(wd, keys, opts.frozen);
    await wd.stop();
    live.pop();

    const N = opts.instances;
    figures.push(
      figure({
        name: `daemon RSS with ${N} instances (max over ${WINDOW_MS / 1000} s)`,
        value: w.rss.max,
        unit: 'MB',
        baselines: [{ name: 'mini supervisor', value: f.rss.max }],
        target: '< 250 MB',
        met: w.rss.max < 250,
        note: w.rss.max >= 250 ? `${(w.rss.max - 250).toFixed(0)} MB over` : undefined,
      }),
      figure({
        name: 'CPU share (utime+stime / wall, of one core)',
        value: w.cpuShare * 100,
        unit: '%',
        baselines: [{ name: 'mini supervisor', value: f.cpuShare * 100 }],
      }),
      figure({
        name: `event-loop lag p99 over the ${WINDOW_MS / 1000} s window`,
        value: w.lagP99,
        unit: 'ms',
        baselines: [{ name: 'mini supervisor', value: f.lagP99 }],
        target: '< 20 ms',
        met: w.lagP99 < 20,
        note: w.lagP99 >= 20 ? `${(w.lagP99 - 20).toFixed(1)} ms over` : undefined,
      }),
      ...(w.ownLag
        ? [
            figure({
              name: 'event-loop lag p99 as the daemon reports it (/metrics, same window)',
              value: w.ownLag.p99,
              unit: 'ms',
              baselines: [{ name: 'mini supervisor (instrument)', value: f.lagP99 }],
            }),
          ]
        : []),
      figure({
        name: 'event-loop lag p99 of the worst 1 s',
        value: w.lagP99Max,
        unit: 'ms',
        baselines: [{ name: 'mini supervisor', value: f.lagP99Max }],
      }),
      figure({
        name: 'event-loop lag, longest single delay',
        value: w.lagMax,
        unit: 'ms',
        baselines: [{ name: 'mini supervisor', value: f.lagMax }],
      }),
      figure({
        name: 'GET /health latency p99 (proxy, 10/s)',
        value: w.healthLatency.p99,
        unit: 'ms',
        baselines: [{ name: 'mini supervisor', value: f.healthLatency.p99 }],
      }),
      figure({
        name: `start → all ${N} running`,
        value: w.allRunningS,
        unit: 's',
        baselines: [{ name: 'mini supervisor', value: f.allRunningS }],
        target: '< 30 s',
        met: w.allRunningS < 30,
        note: w.allRunningS >= 30 ? `${(w.allRunningS - 30).toFixed(1)} s over` : undefined,
      }),
      figure({
        name: `hangs caught within TimeoutSeconds + 1 s (${TIMEOUT_SECONDS + 1} s)`,
        value: w.hangOnTime,
        unit: `of ${w.frozen}`,
        baselines: [{ name: 'mini supervisor', value: f.hangOnTime }],
        target: `all ${opts.frozen}, none falsely`,
        met: w.frozen === opts.frozen && w.hangOnTime === w.frozen && w.falseKills === 0,
        note:
          w.hangOnTime < w.frozen
            ? `${w.frozen - w.hangOnTime} late or missed`
            : w.falseKills
              ? `${w.falseKills} false kills`
              : undefined,
      }),
      figure({
        name: 'hang detection time, max (SIGSTOP → gone)',
        value: Math.max(...w.hangDetect),
        unit: 's',
        baselines: [{ name: 'mini supervisor', value: Math.max(...f.hangDetect) }],
      }),
      figure({
        name: 'false hang kills (servers not frozen)',
        value: w.falseKills,
        unit: '',
        baselines: [{ name: 'mini supervisor', value: f.falseKills }],
      }),
    );
    notes.push(
      `${N} light servers (bench/servers/light-server.mjs: node:http + node:crypto, one kept-alive check-in connection) checking in every ${CHECKIN_SECONDS} s, each on its own ApiPort. Floor first, then the watchdog, with the same ports and servers.`,
      `TimeoutSeconds: ${STARTUP_TIMEOUT_SECONDS} while starting, then ${TIMEOUT_SECONDS} for the hang check (appsettings.yml rewritten, the daemon's config reload; the floor re-reads on SIGHUP). Reason: ${N} Node processes starting at once on this machine take longer than 5 s to all be up even without a supervisor, and TimeoutSeconds also bounds the wait for the first check-in, so 5 s from the start would kill servers still booting and relaunch them in a storm (seen in a trial run: load average above 40).`,
      `Start → all running: from spawning the supervisor to GET /health listing all ${N} as running (polled every 100 ms).`,
      `Steady window: ${WINDOW_MS / 1000} s starting 2 s after all were running. RSS (VmRSS) every 500 ms: watchdog mean ${w.rss.mean.toFixed(0)} MB, floor ${f.rss.mean.toFixed(0)} MB. CPU share = Δ(utime+stime) of the supervisor process / window. 1-minute load average at the window's start and end: watchdog ${w.load.map((l) => l.toFixed(2)).join(' → ')}, floor ${f.load.map((l) => l.toFixed(2)).join(' → ')} (the two windows are a minute apart, not simultaneous).`,
      `Event-loop lag: measured the same way in both supervisors by bench/instrument/loop-lag.mjs, loaded with \`node --import\` (perf_hooks.monitorEventLoopDelay, 10 ms resolution, one histogram per second, merged over the window through their percentile points). Reported: the p99 over the window (the target), the p99 of its worst second and the longest single delay${w.ownLag ? `; the daemon's own /metrics gauge (watchdog_event_loop_lag_p99_seconds, scraped at the window's start and end) is shown too (its max: ${w.ownLag.max.toFixed(1)} ms)` : ''}. GET /health round-trip from the bench is an outside view.`,
      `Hang detection: SIGSTOP ${opts.frozen} servers (every ${Math.max(1, Math.floor(N / opts.frozen))}th), then poll /proc every 20 ms until each is gone (killed and reaped). A server's deadline runs from its last check-in, at most ${CHECKIN_SECONDS} s before the SIGSTOP, so on-time kills land ${TIMEOUT_SECONDS - CHECKIN_SECONDS}–${TIMEOUT_SECONDS} s after it. Watchdog times (s): ${w.hangDetect.map((d) => d.toFixed(2)).join(', ')}; floor: ${f.hangDetect.map((d) => d.toFixed(2)).join(', ')}.`,
      'Cleanup: any frozen server still alive after the wait is SIGKILLed by pid; the watchdog is stopped with SIGTERM (it shuts its servers down), the floor kills its process groups; light servers also exit by themselves 3 s after their supervisor is gone.',
    );
    return {
      id: 'scale',
      title: '4. Scale',
      figures,
      notes,
      commands: [
        `watchdog: node --import bench/instrument/loop-lag.mjs bin/watchdog start (${N} instances, RunCommand light-server.mjs)`,
        'floor: node --import bench/instrument/loop-lag.mjs bench/baselines/mini-supervisor.mjs <config.json>',
      ],
    };
  } finally {
    for (const s of live) await s.stop().catch(() => undefined);
    keepAlive.destroy();
    await tmp.cleanup();
  }
}
