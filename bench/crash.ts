/**
 * 1. Crash → relaunch gap. The same self-stamping server (bench/servers/crash-server.mjs) runs under three
 * supervisors side by side: a bare spawn loop (the floor), PM2 (restart_delay 0) and the watchdog with its crash
 * back-off shrunk to 1 ms. Crashes are triggered one at a time, round-robin across the three, so machine load
 * drifts hit all of them alike. Gap = the next process's `start` stamp − the crashed one's `exit` stamp.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type BenchDaemon, control, startDaemon } from './lib/daemon.ts';
import { BENCH, freePorts, tempDir } from './lib/env.ts';
import { installServer } from './lib/launcher.ts';
import { privatePm2 } from './lib/pm2.ts';
import { signal } from './lib/proc.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { PEER_NAME, type Peer, peerExe, skippedLine, startPeer } from './lib/ss14.ts';
import { summarize } from './lib/stats.ts';
import { sleep, waitFor } from './lib/wait.ts';

const TOKEN = 'bench-token';

interface Mark {
  what: string;
  pid: number;
  at: number;
}

function readMarks(file: string): Mark[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const marks: Mark[] = [];
  for (const line of text.split('\n')) {
    const [what, pid, at] = line.split(' ');
    if (what && pid && at) marks.push({ what, pid: Number(pid), at: Number(at) });
  }
  return marks;
}

/** One supervised crash server, seen through its stamp file. */
class Subject {
  readonly gaps: number[] = [];
  private crashed = new Set<number>();
  constructor(
    readonly name: string,
    readonly file: string,
  ) {}

  /** The newest process that is ready and not crashed yet. */
  async ready(timeoutMs: number): Promise<number> {
    return waitFor(
      `a ready ${this.name} server`,
      () => {
        const ready = readMarks(this.file).filter((m) => m.what === 'ready' && !this.crashed.has(m.pid));
        return ready.at(-1)?.pid;
      },
      timeoutMs,
      20,
    );
  }

  /** Stops counting `pid` as ready (it was replaced by a restart, not crashed). */
  exclude(pid: number): void {
    this.crashed.add(pid);
  }

  /** Crashes `pid` (SIGUSR2 → it stamps `exit` and exits 1), waits for its successor to be ready; returns the gap in ms. */
  async crash(pid: number, timeoutMs: number): Promise<number> {
    this.crashed.add(pid);
    if (!signal(pid, 'SIGUSR2')) throw new Error(`${this.name}: server ${pid} is gone before its crash`);
    // No polling while the supervisor relaunches: the bench would compete for the CPU it measures.
    await sleep(100);
    await this.ready(timeoutMs);
    const marks = readMarks(this.file);
    const exit = marks.findIndex((m) => m.what === 'exit' && m.pid === pid);
    const next = marks.slice(exit + 1).find((m) => m.what === 'start' && m.pid !== pid);
    if (exit < 0 || !next) throw new Error(`${this.name}: no exit/start stamps around the crash of ${pid}`);
    return next.at - (marks[exit] as Mark).at;
  }
}

function instanceYaml(opts: { script: string; port: number; log: string; timing: string[] }): string {
  return [
    'Urls: http://127.0.0.1:0',
    ...(opts.timing.length ? ['Timing:', ...opts.timing.map((t) => `  ${t}`)] : []),
    'Servers:',
    '  Instances:',
    '    crash:',
    `      ApiToken: ${TOKEN}`,
    `      ApiPort: ${opts.port}`,
    `      RunCommand: ${JSON.stringify(opts.script)}`,
    '      TimeoutSeconds: 30',
    '      DumpOnTimeout: false',
    `      Arguments: ["--cvar", "net.port=${opts.port}", "--cvar", "watchdog.checkin_interval=1"]`,
    `      EnvironmentVariables: { CRASH_LOG: ${JSON.stringify(opts.log)} }`,
    '',
  ].join('\n');
}

export async function runCrash(opts: {
  crashes: number;
  firstCrashSamples: number;
}): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const tmp = await tempDir('wd-bench-crash-');
  const notes: string[] = [];
  const figures: Figure[] = [];
  const pm2 = privatePm2(join(tmp.path, 'pm2-home'));
  let floorPid: number | null = null;
  const daemons: BenchDaemon[] = [];
  let peer: Peer | null = null;
  try {
    const script = await installServer('crash-server.mjs', tmp.path);
    const [portTiny, portDefault, portPeer, portPeerApi] = (await freePorts(4)) as [number, number, number, number];

    // The floor: spawn(node, [script]) again on every exit.
    const floor = new Subject('floor', join(tmp.path, 'floor.log'));
    const loop = spawn(
      process.execPath,
      [join(BENCH, 'baselines/respawn-loop.mjs'), script, String(opts.crashes * 3)],
      {
        env: { ...process.env, CRASH_LOG: floor.file },
        stdio: 'ignore',
      },
    );
    floorPid = loop.pid ?? null;

    // PM2: fork mode, autorestart, no delay; min_uptime at its minimum (100 ms) and max_restarts raised so 60 quick crashes are not "unstable".
    const pm2Subject = new Subject('PM2', join(tmp.path, 'pm2.log'));
    await pm2.start([
      {
        name: 'crash',
        script,
        interpreter: process.execPath,
        exec_mode: 'fork',
        autorestart: true,
        restart_delay: 0,
        min_uptime: 100,
        max_restarts: 100_000,
        env: { CRASH_LOG: pm2Subject.file },
      },
    ]);

    // The watchdog, back-off shrunk: BackoffInitialSeconds/BackoffMaxSeconds 0.001 (1 ms); StableRunSeconds high so
    // every crash after the first goes through the back-off path (the first relaunch is immediate by design).
    const wdTiny = new Subject('watchdog', join(tmp.path, 'watchdog.log'));
    const tinyDir = join(tmp.path, 'wd-tiny');
    await mkdir(tinyDir);
    const tiny = await startDaemon(
      tinyDir,
      instanceYaml({
        script,
        port: portTiny as number,
        log: wdTiny.file,
        timing: ['BackoffInitialSeconds: 0.001', 'BackoffMaxSeconds: 0.001', 'StableRunSeconds: 3600'],
      }),
    );
    daemons.push(tiny);

    // Default settings: the first crash after a check-in relaunches at once by design; POST restart resets the
    // crash streak between samples. Started now so its samples interleave with the others.
    const wdDefault = new Subject('watchdog-default', join(tmp.path, 'watchdog-default.log'));
    const defDir = join(tmp.path, 'wd-default');
    await mkdir(defDir);
    const def = await startDaemon(
      defDir,
      instanceYaml({ script, port: portDefault as number, log: wdDefault.file, timing: [] }),
    );
    daemons.push(def);
    const firstCrash = async () => {
      const pid = await wdDefault.ready(30_000);
      await sleep(30);
      wdDefault.gaps.push(await wdDefault.crash(pid, 30_000));
      const after = await wdDefault.ready(30_000);
      const status = await control(def.url, 'crash', TOKEN, 'restart');
      if (status !== 200) throw new Error(`POST /instances/crash/restart answered ${status}`);
      // The restarted server exits cleanly; the next sample waits for its successor to be ready.
      wdDefault.exclude(after);
    };

    // The real SS14.Watchdog (bench/peers/ss14-watchdog), when it can be built: the same crash server as instance
    // `crash`; it relaunches every crash at once (no back-off), so every crash of it is comparable to both of ours.
    const built = await peerExe();
    const real = new Subject(PEER_NAME, join(tmp.path, 'real.log'));
    if ('exe' in built) {
      const peerDir = join(tmp.path, 'ss14');
      await mkdir(peerDir);
      peer = await startPeer(built.exe, peerDir, portPeer, [
        {
          key: 'crash',
          token: TOKEN,
          apiPort: portPeerApi,
          runCommand: script,
          timeoutSeconds: 30,
          arguments: ['--cvar', `net.port=${portPeerApi}`, '--cvar', 'watchdog.checkin_interval=1'],
          env: { CRASH_LOG: real.file },
        },
      ]);
    } else {
      notes.push(skippedLine(built.skipped));
    }

    const subjects = peer ? [floor, pm2Subject, wdTiny, real] : [floor, pm2Subject, wdTiny];
    // Warm-up: one crash each, not counted (the watchdog's first crash takes the immediate path, counted below).
    const warm: Record<string, number> = {};
    for (const s of subjects) {
      const pid = await s.ready(30_000);
      await sleep(50);
      warm[s.name] = await s.crash(pid, 30_000);
    }
    // Round-robin one crash at a time (floor, PM2, watchdog, …) so load drift hits every subject alike; a default-
    // settings first crash every few rounds.
    const every = Math.max(1, Math.floor(opts.crashes / opts.firstCrashSamples));
    for (let r = 0; r < opts.crashes; r++) {
      for (const s of subjects) {
        const pid = await s.ready(30_000);
        await sleep(30); // the supervisor finishes its launch bookkeeping; a crash this early is still realistic
        s.gaps.push(await s.crash(pid, 30_000));
      }
      if (r % every === every - 1 && wdDefault.gaps.length < opts.firstCrashSamples) await firstCrash();
    }
    // One second crash in the same streak under default settings, to show the back-off (BackoffInitialSeconds 1).
    const streakPid = await wdDefault.ready(30_000);
    await sleep(30);
    const first = await wdDefault.crash(streakPid, 30_000);
    const again = await wdDefault.ready(30_000);
    await sleep(30);
    const second = await wdDefault.crash(again, 30_000);

    const [f, p, w] = subjects.map((s) => summarize(s.gaps)) as [
      ReturnType<typeof summarize>,
      ReturnType<typeof summarize>,
      ReturnType<typeof summarize>,
    ];
    const rs = peer ? summarize(real.gaps) : null;
    const base = (stat: 'p50' | 'p90' | 'max') => [
      { name: 'spawn-loop floor', value: f[stat] },
      { name: 'PM2', value: p[stat] },
      ...(rs ? [{ name: PEER_NAME, value: rs[stat] }] : []),
    ];
    const verdictNote = (v: number) =>
      v > 2 * f.p50
        ? `${(v / f.p50).toFixed(2)}× floor`
        : v >= p.p50
          ? `${(v - p.p50).toFixed(1)} ms above PM2`
          : undefined;
    figures.push(
      figure({
        name: `gap p50, back-off 1 ms (n=${w.n})`,
        value: w.p50,
        unit: 'ms',
        baselines: base('p50'),
        target: '≤ 2× floor and < PM2',
        met: w.p50 <= 2 * f.p50 && w.p50 < p.p50,
        note: verdictNote(w.p50),
      }),
    );
    figures.push(figure({ name: 'gap p90, back-off 1 ms', value: w.p90, unit: 'ms', baselines: base('p90') }));
    figures.push(figure({ name: 'gap max, back-off 1 ms', value: w.max, unit: 'ms', baselines: base('max') }));
    figures.push(
      figure({
        name: 'supervisor overhead p50 (gap − floor gap)',
        value: w.p50 - f.p50,
        unit: 'ms',
        baselines: [
          { name: 'PM2 − floor', value: p.p50 - f.p50 },
          ...(rs ? [{ name: `${PEER_NAME} − floor`, value: rs.p50 - f.p50 }] : []),
        ],
      }),
    );
    if (rs) {
      figures.push(
        figure({
          name: `${PEER_NAME}: gap p50 (n=${rs.n}, every crash relaunched at once)`,
          value: rs.p50,
          unit: 'ms',
          baselines: [
            { name: 'spawn-loop floor', value: f.p50 },
            { name: 'PM2', value: p.p50 },
            { name: 'ours, back-off 1 ms', value: w.p50 },
          ],
        }),
        figure({
          name: `${PEER_NAME}: gap max`,
          value: rs.max,
          unit: 'ms',
          baselines: [
            { name: 'spawn-loop floor', value: f.max },
            { name: 'ours, back-off 1 ms', value: w.max },
          ],
        }),
      );
      notes.push(
        `${PEER_NAME} (bench/peers/ss14-watchdog, .NET ${peer ? 'apphost' : ''}, Serilog at Warning): the same crash server as its instance \`crash\`, TimeoutSeconds 30, in the same round-robin. It relaunches on every exit after a check-in with no back-off, so its gaps compare with both of ours (back-off 1 ms and the first crash under default settings). Warm-up ${warm[PEER_NAME]?.toFixed(1)} ms. Its gaps (ms), in order: ${real.gaps.map((g) => g.toFixed(0)).join(' ')}.`,
      );
    }
    notes.push(
      `Each subject crashed ${w.n} times, one crash at a time round-robin over the ${subjects.length}, after 1 uncounted warm-up crash each (floor ${warm.floor?.toFixed(1)} ms, PM2 ${warm.PM2?.toFixed(1)} ms, watchdog ${warm.watchdog?.toFixed(1)} ms). All gaps (ms), in order — floor: ${floor.gaps.map((g) => g.toFixed(0)).join(' ')}; PM2: ${pm2Subject.gaps.map((g) => g.toFixed(0)).join(' ')}; watchdog: ${wdTiny.gaps.map((g) => g.toFixed(0)).join(' ')}.`,
      "Every gap is measured by the servers themselves: `exit` stamp (just before process.exit(1) on SIGUSR2) to the next process's `start` stamp, both `performance.timeOrigin + performance.now()`. So each gap includes Node's own start-up of the next server, identical for all three.",
      'Watchdog back-off: the first crash after a check-in relaunches at once; later ones wait BackoffInitialSeconds × 2^(n−2), capped at BackoffMaxSeconds. Disabled here by config: `BackoffInitialSeconds: 0.001`, `BackoffMaxSeconds: 0.001` (a 1 ms timer), `StableRunSeconds: 3600` (so every counted crash takes the back-off path, none the immediate one).',
      'Each server checked in (watchdog) or was up (floor, PM2) and then ran ≥ 30 ms before its crash.',
      'The watchdog launches RunCommand as a program; the bench gives the server an absolute `#!<node>` shebang so no /usr/bin/env exec is added. Floor and PM2 run `node <script>` (PM2 in fork mode, which loads its ProcessContainerFork wrapper first).',
    );
    const firstGaps = [...wdDefault.gaps, first];
    const d = summarize(firstGaps);
    figures.splice(
      4,
      0,
      figure({
        name: `first-crash gap p50, default settings (n=${d.n})`,
        value: d.p50,
        unit: 'ms',
        baselines: base('p50'),
        target: '≤ 2× floor and < PM2',
        met: d.p50 <= 2 * f.p50 && d.p50 < p.p50,
        note: verdictNote(d.p50),
      }),
      figure({ name: 'first-crash gap max, default settings', value: d.max, unit: 'ms', baselines: base('max') }),
    );
    figures.push(
      figure({ name: 'second crash in a row, default settings (back-off by design)', value: second, unit: 'ms' }),
    );
    notes.push(
      `Default settings (no Timing section): ${d.n} first crashes, interleaved with the rounds above, each after POST /instances/crash/restart reset the crash streak (the last one starts the streak below); then one second crash in a row shows the default back-off, BackoffInitialSeconds = 1 s.`,
    );
    return {
      id: 'crash',
      title: '1. Crash → relaunch gap',
      figures,
      notes,
      commands: [
        'watchdog: bin/watchdog start (instance RunCommand = crash-server.mjs; Timing as noted)',
        `floor: node bench/baselines/respawn-loop.mjs <crash-server.mjs>`,
        'PM2: PM2_HOME=<temp> pm2 start ecosystem.config.cjs (fork mode, autorestart: true, restart_delay: 0); pm2 kill at the end',
        `${PEER_NAME}: "$(bash bench/peers/ss14-watchdog/build.sh)" in a temp folder with appsettings.yml (instance RunCommand = crash-server.mjs, Serilog Warning); SIGTERM by pid at the end`,
      ],
    };
  } finally {
    for (const d of daemons) await d.stop(15_000);
    if (peer) await peer.stop(15_000);
    if (floorPid !== null) signal(floorPid, 'SIGTERM');
    await pm2.kill();
    await tmp.cleanup();
  }
}
