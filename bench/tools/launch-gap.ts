/**
 * The daemon's part of a relaunch, server exit → next spawn, measured on one or more builds of the daemon side by
 * side: `node --import tsx bench/tools/launch-gap.ts [--rounds N] [--crash] [--engine] [--marker] [<checkout> …]` (default:
 * this checkout). Each checkout's compiled daemon (`bin/watchdog` with WATCHDOG_RUNTIME=dist: run `npm run build` in
 * it first) supervises one server on a loopback port: bench/servers/crash-server.mjs, or with `--engine` the real
 * engine (bench/peers/robust-engine). Rounds alternate between the daemons. A restart is POST
 * /instances/<key>/restart (the server exits 0 on the watchdog's /shutdown); `--crash` adds SIGKILL crashes with the
 * crash back-off shrunk to 1 ms; `--marker` tracks launches by their environment marker instead of cgroups. The exit is the moment the old server's /proc entry turns zombie or goes (polled
 * every 2 ms); the gap ends when the daemon's `server launched` line reaches this script. Lines
 * `TIMING <point> <wall ms>` that a build prints (temporary instrumentation) are reported as medians after the exit.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { lightConfig, TOKEN } from '../lib/config.ts';
import { type BenchDaemon, control, instanceStatus, startDaemon } from '../lib/daemon.ts';
import { freePorts, ROOT, tempDir } from '../lib/env.ts';
import { installServer } from '../lib/launcher.ts';
import { signal } from '../lib/proc.ts';
import { median, percentile } from '../lib/stats.ts';
import { sleep, waitFor, wallNow } from '../lib/wait.ts';
import { engineBundle, engineConfigToml } from '../peers/robust-engine/bundle.ts';

const KEY = 'gap';

interface Subject {
  name: string;
  daemon: BenchDaemon;
  gaps: Record<'restart' | 'crash', number[]>;
  points: Map<string, number[]>;
}

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1] || 20) || 20;
const crash = args.includes('--crash');
const engine = args.includes('--engine');
const marker = args.includes('--marker');
const checkouts = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--rounds');
if (checkouts.length === 0) checkouts.push(ROOT);

/** Resolves with the wall time at which `pid` was first seen exited (zombie) or gone; polls every 2 ms. */
async function exitOf(pid: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    const at = wallNow();
    if (stat === null || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return at;
    await sleep(2);
  }
  throw new Error(`server ${pid} did not exit within ${timeoutMs} ms`);
}

const tmp = await tempDir('wd-launch-gap-');
const subjects: Subject[] = [];
try {
  const program = engine ? (await engineBundle()).program : await installServer('crash-server.mjs', tmp.path);
  const ports = await freePorts(checkouts.length * 2);
  for (const [i, checkout] of checkouts.entries()) {
    const dir = join(tmp.path, `d${i}`);
    const port = ports[2 * i] as number;
    await mkdir(join(dir, 'instances', KEY), { recursive: true });
    if (engine)
      await writeFile(
        join(dir, 'instances', KEY, 'config.toml'),
        engineConfigToml({ statusPort: port, gamePort: ports[2 * i + 1] as number }),
      );
    const timing = ['BackoffInitialSeconds: 0.001', 'BackoffMaxSeconds: 0.001', 'StableRunSeconds: 3600'];
    const yaml = engine
      ? [
          'Urls: http://127.0.0.1:0',
          'Timing:',
          ...timing.map((t) => `  ${t}`),
          'Servers:',
          '  Instances:',
          `    ${KEY}:`,
          `      ApiToken: ${TOKEN}`,
          `      ApiPort: ${port}`,
          `      RunCommand: ${JSON.stringify(program)}`,
          '      TimeoutSeconds: 30',
          '      DumpOnTimeout: false',
          ...(marker ? ['Process:', '  Tracking: Environment'] : []),
          '',
        ].join('\n')
      : lightConfig({
          script: program,
          instances: [{ key: KEY, port }],
          checkinSeconds: 1,
          timeoutSeconds: 30,
          timing,
          instanceExtra: ['EnvironmentVariables: { CRASH_LIFETIME_MS: "900000" }'],
        }) + (marker ? 'Process:\n  Tracking: Environment\n' : '');
    const daemon = await startDaemon(dir, yaml, {
      program: join(resolve(checkout), 'bin/watchdog'),
      env: { WATCHDOG_RUNTIME: 'dist' },
    });
    subjects.push({ name: checkout, daemon, gaps: { restart: [], crash: [] }, points: new Map() });
  }

  /** The running server's pid once it has checked in, waiting for one other than `old`. */
  const running = (s: Subject, old: number | null) =>
    waitFor(
      'a server to check in',
      async () => {
        const st = await instanceStatus(s.daemon.url, KEY, TOKEN);
        return st.state === 'server.running' && st.pid !== null && st.pid !== old && st.lastCheckinAt
          ? st.pid
          : undefined;
      },
      120_000,
      50,
    );

  const relaunch = async (s: Subject, how: 'restart' | 'crash', counted: boolean) => {
    const old = await running(s, null);
    // The engine answers /shutdown only once it is fully up; its check-in comes a little before that.
    if (engine) await sleep(1000);
    const mark = s.daemon.lines().length;
    const exited = exitOf(old, 30_000);
    if (how === 'restart') {
      const status = await control(s.daemon.url, KEY, TOKEN, 'restart');
      if (status !== 200) throw new Error(`restart answered ${status}`);
    } else signal(old, 'SIGKILL');
    const exit = await exited;
    await running(s, old);
    const seen = s.daemon.lines().slice(mark);
    const launched = seen.find((l) => /server launched/.test(l.line) && l.at >= exit);
    if (!launched) throw new Error('no `server launched` line after the exit');
    if (!counted) return;
    s.gaps[how].push(launched.at - exit);
    for (const l of seen) {
      const m = /TIMING (\S+) ([\d.]+)/.exec(l.line);
      if (!m?.[1] || Number(m[2]) < exit - 1000) continue;
      const list = s.points.get(m[1]) ?? [];
      list.push(Number(m[2]) - exit);
      s.points.set(m[1], list);
    }
  };

  for (const s of subjects) await relaunch(s, 'restart', false);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? subjects : [...subjects].reverse();
    for (const s of order) {
      await relaunch(s, 'restart', true);
      if (crash) await relaunch(s, 'crash', true);
    }
  }
  const fmt = (v: number[]) => {
    const sorted = [...v].sort((a, b) => a - b);
    const p = (q: number) => percentile(sorted, q).toFixed(0);
    return `median ${median(v).toFixed(0)} ms (p10 ${p(10)}, p90 ${p(90)}, n=${v.length}) [${v.map((x) => x.toFixed(0)).join(' ')}]`;
  };
  for (const s of subjects) {
    console.log(s.name);
    for (const how of ['restart', 'crash'] as const)
      if (s.gaps[how].length) console.log(`  ${how}: exit → server launched ${fmt(s.gaps[how])}`);
    for (const [name, v] of s.points) console.log(`    ${name}: median +${median(v).toFixed(1)} ms`);
  }
} finally {
  for (const s of subjects) await s.daemon.stop();
  await tmp.cleanup();
  if (engine) await (await engineBundle()).cleanup();
}
