/**
 * 7. The real engine (Robust.Server, bench/peers/robust-engine) under our daemon and under the real SS14.Watchdog,
 * side by side in one run: crash → relaunch, hang detection, and the downtime of a restart and of an update
 * completed by a restart. Every time is taken by the bench the same way for both (SIGKILL/SIGSTOP it sends, /proc,
 * polls of the engine's own status port); only "the check-in was taken" comes from each watchdog (our status API,
 * the real one's Trace log line). Skipped, with the reason, when the engine or the real watchdog cannot run here.
 */
import { join } from 'node:path';
import { type BenchCdn, startCdn } from './lib/cdn.ts';
import { engineBuilds } from './lib/engine-builds.ts';
import { measureCrash, measureDowntime, measureHangs, type Samples } from './lib/engine-measure.ts';
import { type EngineSubject, oursWithEngine, realWithEngine } from './lib/engine-subjects.ts';
import { freePorts, tempDir } from './lib/env.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { PEER_NAME, peerExe } from './lib/ss14.ts';
import { summarize } from './lib/stats.ts';
import { ENGINE_CHECKIN_SECONDS, ENGINE_SKIP, engineBundle } from './peers/robust-engine/bundle.ts';

const TITLE = '7. Real engine: ours and the real SS14.Watchdog';

/** Our crash back-off shrunk as in the crash benchmark: the real watchdog relaunches every crash at once. */
const NO_BACKOFF = ['BackoffInitialSeconds: 0.001', 'BackoffMaxSeconds: 0.001', 'StableRunSeconds: 3600'];

export interface EngineOptions {
  /** Crashes, restarts and updates per watchdog. */
  rounds: number;
  /** Hangs per watchdog (each one costs up to TimeoutSeconds). */
  hangs: number;
  /** TimeoutSeconds of both; above the engine's fixed 15 s check-in period. */
  timeoutSeconds: number;
}

/** One figure per sample set: ours as the value, the real watchdog's as the baseline (ratio = ours / theirs). */
function pair(name: string, ours: readonly number[], theirs: readonly number[], unit: 'ms' | 's'): Figure {
  const scale = unit === 's' ? 1 / 1000 : 1;
  const o = summarize(ours);
  const t = summarize(theirs);
  return figure({
    name: `${name}, median (ours n=${o.n}, theirs n=${t.n})`,
    value: o.p50 * scale,
    unit,
    baselines: [{ name: PEER_NAME, value: t.p50 * scale }],
  });
}

const list = (v: readonly number[]) => v.map((x) => x.toFixed(0)).join(' ');
const spread = (name: string, s: Samples) => `${name}: ours ${list(s.ours)}; theirs ${list(s.theirs)}`;

export async function runEngine(opts: EngineOptions): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const base = { id: 'engine', title: TITLE, commands: [] as string[] };
  if (ENGINE_SKIP)
    return { ...base, figures: [], notes: [], skipped: `the real engine cannot run here: ${ENGINE_SKIP}` };
  const built = await peerExe();
  if ('skipped' in built) return { ...base, figures: [], notes: [], skipped: `${PEER_NAME}: ${built.skipped}` };
  if (opts.timeoutSeconds <= ENGINE_CHECKIN_SECONDS)
    throw new Error(`TimeoutSeconds ${opts.timeoutSeconds} would see false hangs: the engine checks in every 15 s`);
  const bundle = await engineBundle();
  const tmp = await tempDir('wd-bench-engine-').catch(async (err: unknown) => {
    await bundle.cleanup();
    throw err;
  });
  const running: EngineSubject[] = [];
  let cdn: BenchCdn | null = null;
  const notes: string[] = [];
  try {
    // A status (TCP) and a game (UDP) port per engine, 4 engines; and the real watchdog's own port.
    const ports = await freePorts(9);
    const port = (i: number) => ports[i] as number;
    const peerPort = port(8);
    // Phase 1: the engine as RunCommand (absolute, the bundle's own program) for crashes and hangs.
    const eng = { key: 'eng', runCommand: bundle.program, timeoutSeconds: opts.timeoutSeconds };
    running.push(
      await oursWithEngine(join(tmp.path, 'ours'), { ...eng, statusPort: port(0), gamePort: port(1) }, NO_BACKOFF),
    );
    running.push(
      await realWithEngine(built.exe, join(tmp.path, 'real'), peerPort, {
        ...eng,
        statusPort: port(2),
        gamePort: port(3),
      }),
    );
    const [ours, real] = running as [EngineSubject, EngineSubject];
    const crash = await measureCrash(ours, real, opts.rounds);
    const hang = await measureHangs(ours, real, opts.hangs);
    await Promise.all(running.splice(0).map((s) => s.stop()));

    // Phase 2: the bundle packed as a build (zip, the real watchdog's only format) on a loopback CDN, Manifest.
    const builds = await engineBuilds(bundle.dir, join(tmp.path, 'cdn'));
    cdn = await startCdn(builds.folder);
    const upd = { key: 'upd', runCommand: 'bin/RobustToolbox/bin/Server/Robust.Server', timeoutSeconds: 60 };
    const first = { ours: await builds.publish('ours', cdn.url), real: await builds.publish('real', cdn.url) };
    const manifest = (who: 'ours' | 'real') => `${cdn?.url}/manifest-${who}.json`;
    running.push(
      await oursWithEngine(
        join(tmp.path, 'ours-upd'),
        { ...upd, statusPort: port(4), gamePort: port(5), manifestUrl: manifest('ours') },
        [],
      ),
    );
    running.push(
      await realWithEngine(built.exe, join(tmp.path, 'real-upd'), peerPort, {
        ...upd,
        statusPort: port(6),
        gamePort: port(7),
        manifestUrl: manifest('real'),
      }),
    );
    const [oursU, realU] = running as [EngineSubject, EngineSubject];
    const down = await measureDowntime(oursU, realU, opts.rounds, (who) => builds.publish(who, cdn?.url ?? ''), first);

    const figures = [
      pair('crash (SIGKILL) → relaunched (the watchdog logs the launch)', crash.launch.ours, crash.launch.theirs, 'ms'),
      pair('crash → status port answers again', crash.status.ours, crash.status.theirs, 'ms'),
      pair('crash → first check-in of the new engine', crash.checkin.ours, crash.checkin.theirs, 'ms'),
      pair(
        `hang (SIGSTOP): last check-in → engine killed, TimeoutSeconds ${opts.timeoutSeconds}`,
        hang.ours,
        hang.theirs,
        's',
      ),
      pair('restart downtime: status port down → up', down.restart.ours, down.restart.theirs, 'ms'),
      pair('update + restart downtime: status port down → up', down.update.ours, down.update.theirs, 'ms'),
      pair('of which restart: status port down → launched', down.restartLaunch.ours, down.restartLaunch.theirs, 'ms'),
      pair(
        'of which update + restart: status port down → launched',
        down.updateLaunch.ours,
        down.updateLaunch.theirs,
        'ms',
      ),
    ];
    notes.push(
      `Engine: ${bundle.program.slice(bundle.dir.length + 1)} from the bundle (RobustToolbox engine 289, placeholder content), its config.toml from bench/peers/robust-engine/bundle.ts in \`instances/<key>/\` of each watchdog's folder; both watchdogs launch it the same way (argv, token in the environment, the instance folder as working directory). TimeoutSeconds ${opts.timeoutSeconds} for crashes and hangs, DumpOnTimeout false; the engine checks in every ${ENGINE_CHECKIN_SECONDS} s, fixed.`,
      `Crash: SIGKILL of the engine once it has checked in and its status port answers, alternating which watchdog goes first. Ours with its crash back-off shrunk to 1 ms (\`${NO_BACKOFF.join('`, `')}\`), as the real one has none. "Relaunched" is the watchdog's launch line reaching the bench (ours \`server launched\`, theirs \`Launched!\` at Debug); "status port" is the first 200 from GET /status on the engine's port, polled every 25 ms once the killed pid is gone; "check-in" is ours \`lastCheckinAt\` from its status API, theirs the \`Received ping from server.\` Trace line. Samples (ms) — ${spread('relaunched', crash.launch)}; ${spread('status', crash.status)}; ${spread('check-in', crash.checkin)}.`,
      `Hang: both engines SIGSTOPped at the same moment; detection = the stopped pid gone (/proc polled every 20 ms) − the last check-in the watchdog took. Expect TimeoutSeconds plus the watchdog's timer and kill; a check-in in flight at the stop can make a sample shorter by its age. Samples (ms) — ours ${list(hang.ours)}; theirs ${list(hang.theirs)}.`,
      `Downtime: GET /status on the engine's port polled every 20 ms (a fresh connection each); downtime = the first poll that fails → the first that answers 200 again, ±20 ms. Restart: POST /instances/upd/restart (both: /shutdown to the engine, which exits within ~0.2 s, then a launch). Update: the engine without game content never leaves on /update, so an update here is what both watchdogs can do with it: publish a new build (the bundle as a zip, ${builds.zipMiB.toFixed(1)} MiB, a build.txt naming it) in its Manifest, POST /instances/upd/update, wait until the watchdog has taken it in and told the engine (ours: downloaded, verified, unpacked and staged, \`maintenance.staged\`; theirs: \`sending update notification\`), then POST /instances/upd/restart. Ours installs the staged build between the exit and the launch (a swap); the real one downloads, hashes and unpacks after the exit. After each, bin/build.txt names the new build. Samples (ms) — ${spread('restart', down.restart)}; ${spread('update + restart', down.update)}; down → launched, ${spread('restart', down.restartLaunch)}; ${spread('update + restart', down.updateLaunch)}. The rest of each downtime is the engine starting (launch → status answering).`,
    );
    return {
      ...base,
      figures,
      notes,
      commands: [
        'ours: bin/watchdog start (instance RunCommand = <bundle>/RobustToolbox/bin/Server/Robust.Server, or bin/… with UpdateType Manifest)',
        `${PEER_NAME}: $(bench/peers/ss14-watchdog/build.sh) in its own folder, appsettings.yml with the same instance`,
      ],
    };
  } finally {
    await Promise.allSettled(running.map((s) => s.stop()));
    cdn?.stop();
    // The runner runs each benchmark once per process: the unpacked engine is not needed after this.
    await Promise.all([tmp.cleanup(), bundle.cleanup()]);
  }
}
