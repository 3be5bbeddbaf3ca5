/**
 * 6. Update downtime: how long players cannot play while the watchdog installs a ~200 MB build, against a plain
 * relaunch of the same server with no update (the floor). One daemon supervises one self-stamping server
 * (bench/servers/crash-server.mjs); downtime = the new server's `ready` stamp (its first check-in answered) − the
 * old one's `exit` stamp (written just before it exits after the watchdog's POST /update or /shutdown). The update
 * is `POST /instances/<key>/update` with a new build published on a loopback CDN (Manifest provider, tar.gz); the
 * floor is `POST /instances/<key>/restart` with nothing new. Rounds alternate which goes first.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileSize, generateBuild, packTarGz, sha256File } from './lib/build-gen.ts';
import { type BenchCdn, manifestInstance, startCdn } from './lib/cdn.ts';
import { lightConfig, TOKEN } from './lib/config.ts';
import { type BenchDaemon, control, displacedBuildsGone, instanceStatus, startDaemon } from './lib/daemon.ts';
import { BENCH, freePorts, tempDir } from './lib/env.ts';
import { installServer } from './lib/launcher.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { runBash } from './lib/shell.ts';
import { median, summarize } from './lib/stats.ts';
import { sleep, waitFor } from './lib/wait.ts';

const MB = 1 << 20;
const KEY = 'down';
/** The budget for one update, staging included (a 200 MB tar.gz takes 3–10 s here). */
const UPDATE_TIMEOUT_MS = 300_000;

interface Stamp {
  what: string;
  pid: number;
  at: number;
}

async function readStamps(file: string): Promise<Stamp[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f): f is [string, string, string] => f.length === 3)
    .map(([what, pid, at]) => ({ what, pid: Number(pid), at: Number(at) }));
}

/** One relaunch as the stamps and the daemon's log saw it. */
interface Relaunch {
  /** ms from the old server's exit stamp to the new one's ready stamp. */
  downtime: number;
  /** Named points (daemon log lines, the ready stamp) as ms after the exit stamp, in the order they happened. */
  points: Array<[string, number]>;
  /** The daemon's rm/rename/writeFile calls in its instance folder during the gap (bench/instrument/fs-timing.mjs). */
  fs: FsCall[];
}

interface FsCall {
  /** `rm .update/old-*`: the operation and the path in the instance folder, random suffixes as `*`. */
  what: string;
  /** ms after the exit stamp. */
  start: number;
  ms: number;
}

/** The fs-timing lines among `lines` that started inside [from, to], paths relative to `root`. */
function fsCalls(lines: ReadonlyArray<{ line: string }>, root: string, from: number, to: number): FsCall[] {
  const calls: FsCall[] = [];
  for (const { line } of lines) {
    const m = /fs-timing (\w+) ([\d.]+) ([\d.]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = Number(m[2]);
    if (start < from || start > to) continue;
    // Random suffixes as `*`, and the files of a displaced build as one entry (their calls are summed).
    const path = (m[4] ?? '')
      .slice(root.length + 1)
      .replace(/-[0-9a-f]{12}\b/g, '-*')
      .replace(/(\/old-\*)\/.*/, '$1/…');
    calls.push({ what: `${m[1]} ${path}`, start: start - from, ms: Number(m[3]) });
  }
  return calls;
}

/** The median ms from the exit stamp to a named point over `list` (NaN when no run saw it). */
function medianAt(list: readonly Relaunch[], name: string): number {
  return median(list.flatMap((r) => r.points.filter(([n]) => n === name).map(([, ms]) => ms)));
}

/**
 * The update's extra time split at the launch: the daemon's part (exit → `server launched`) and the server's start
 * (launch → ready), each against the restart's, and how much of the gap the background removal of the displaced
 * build overlapped (its unlink/rmdir calls, summed, median per run).
 */
function splitText(update: readonly Relaunch[], floor: readonly Relaunch[]): string {
  const part = (list: readonly Relaunch[]) => {
    const spawned = medianAt(list, 'spawned');
    return { daemon: spawned, server: medianAt(list, 'ready (server stamp)') - spawned };
  };
  const u = part(update);
  const f = part(floor);
  const removal = median(
    update.map((r) => r.fs.filter((c) => c.what.includes('/old-*/')).reduce((a, c) => a + c.ms, 0)),
  );
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  return `Split at the launch (medians): exit → server launched ${ms(u.daemon)} for the update against ${ms(f.daemon)} for the restart (the daemon's part: the second check, the swap, data.json, the spawn); launch → ready ${ms(u.server)} against ${ms(f.server)} (the server starting). The removal of the displaced build (in the background, from the new server's first check-in on) was busy for ${ms(removal)} of the update's gap (its file-system calls summed).`;
}

/** Each distinct call's median duration over `list`, slowest first, those of 1 ms or more. */
function medianCalls(list: readonly Relaunch[]): string {
  const names = [...new Set(list.flatMap((r) => r.fs.map((c) => c.what)))];
  const rows = names.map((what) => {
    const ms = list.map((r) => r.fs.filter((c) => c.what === what).reduce((a, c) => a + c.ms, 0));
    return { what, ms: median(ms) };
  });
  const shown = rows.filter((r) => r.ms >= 1).sort((a, b) => b.ms - a.ms);
  return shown.length ? shown.map((r) => `${r.what} ${r.ms.toFixed(0)} ms`).join(', ') : 'none of 1 ms or more';
}

/** Each point's median offset over `list`, named in the order of the run that saw the most of them. */
function medianPoints(list: readonly Relaunch[]): string {
  const names = list.reduce<Relaunch['points']>((a, r) => (r.points.length > a.length ? r.points : a), []);
  return names
    .map(([name]) => {
      const offsets = list.flatMap((r) => r.points.filter(([n]) => n === name).map(([, ms]) => ms));
      return `${name} +${median(offsets).toFixed(0)}`;
    })
    .join(', ');
}

export async function runDowntime(opts: {
  megabytes: number;
  rounds: number;
}): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const tmp = await tempDir('wd-bench-downtime-');
  let daemon: BenchDaemon | null = null;
  let cdn: BenchCdn | null = null;
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    const served = join(tmp.path, 'cdn');
    await mkdir(served);
    const genStart = Date.now();
    const src = join(tmp.path, 'build-src');
    const build = await generateBuild(src, opts.megabytes);
    const tgz = await packTarGz(src, served);
    await rm(src, { recursive: true, force: true });
    const sha = await sha256File(tgz);
    const size = await fileSize(tgz);
    const genSeconds = (Date.now() - genStart) / 1000;
    cdn = await startCdn(served);
    // The first build is the big one too, so from the first counted update on bin.prev holds a full build that the
    // install replaces, as on a server that has been updated before.
    await cdn.publish('build.tar.gz', sha);

    const script = await installServer('crash-server.mjs', tmp.path);
    const stamps = join(tmp.path, 'stamps.log');
    const [port] = await freePorts(1);
    const wdDir = join(tmp.path, 'wd');
    await mkdir(wdDir);
    daemon = await startDaemon(
      wdDir,
      lightConfig({
        script,
        instances: [{ key: KEY, port: port as number }],
        checkinSeconds: 1,
        timeoutSeconds: 30,
        instanceExtra: [
          ...manifestInstance(cdn),
          // A server outlives a round by far; the lifetime is only the leak guard of a bench that died.
          `EnvironmentVariables: { CRASH_LOG: ${JSON.stringify(stamps)}, CRASH_LIFETIME_MS: "900000" }`,
        ],
      }),
      {
        startTimeoutMs: 120_000,
        nodeArgs: ['--import', join(BENCH, 'instrument/fs-timing.mjs')],
        env: { BENCH_FS_TIMING_ROOT: wdDir },
      },
    );
    const d = daemon;

    /** The newest server that stamped `ready`, waiting for one whose pid is not in `known`. */
    const readyServer = (known: ReadonlySet<number>, timeoutMs: number) =>
      waitFor(
        'a new server to check in',
        async () => (await readStamps(stamps)).filter((s) => s.what === 'ready' && !known.has(s.pid)).at(-1),
        timeoutMs,
        20,
      );

    /**
     * Asks for `action` and waits for the next server to check in. The old server's exit and the new one's ready are
     * their own stamps; the daemon's log lines in between (the moment each reached the bench) split the gap.
     */
    const relaunch = async (action: 'restart' | 'update', revision: string | null): Promise<Relaunch> => {
      const old = await readyServer(new Set(), 60_000);
      const known = new Set((await readStamps(stamps)).map((s) => s.pid));
      // The daemon removes the build an update displaced after the launch, in the background: wait for it, so that
      // neither side's gap overlaps the removal left by the update before it.
      await waitFor('the displaced build to be removed', () => displacedBuildsGone(wdDir, KEY), 120_000, 100);
      // Dirty pages of the run before are written back now, not during the measured gap (not timed).
      await runBash('sync', {});
      const logMark = d.lines().length;
      const status = await control(d.url, KEY, TOKEN, action);
      if (status !== 200) throw new Error(`POST /instances/${KEY}/${action} answered ${status}`);
      // No tight polling while the daemon stages the build: the bench would compete for the CPU it measures.
      await sleep(action === 'update' ? 1000 : 100);
      const next = await readyServer(known, UPDATE_TIMEOUT_MS);
      const exit = (await readStamps(stamps)).find((s) => s.what === 'exit' && s.pid === old.pid);
      if (!exit) throw new Error(`server ${old.pid} left without its exit stamp (${action})`);
      const seen = d.lines().slice(logMark);
      const when = (re: RegExp) => seen.find((l) => re.test(l.line) && l.at >= exit.at)?.at;
      const points: Array<[string, number | undefined]> = [
        ['daemon saw the exit', when(/state (updating|starting)\b/)],
        ['update check done', when(/installing update/)],
        ['installed', when(/update installed/)],
        ['spawned', when(/server launched/)],
        ['ready (server stamp)', next.at],
        ['running (daemon)', when(/state server\.running\b/)],
      ];
      if (revision !== null) {
        const st = await instanceStatus(d.url, KEY, TOKEN);
        if (st.revision !== revision)
          throw new Error(`after the update the instance runs ${st.revision}, not ${revision}`);
      }
      return {
        downtime: next.at - exit.at,
        fs: fsCalls(seen, wdDir, exit.at, next.at),
        points: points
          .filter((p): p is [string, number] => p[1] !== undefined)
          .map(([name, at]): [string, number] => [name, at - exit.at])
          .sort((a, b) => a[1] - b[1]),
      };
    };

    const floor: Relaunch[] = [];
    const update: Relaunch[] = [];
    const runFloor = async (counted: boolean) => {
      const r = await relaunch('restart', null);
      if (counted) floor.push(r);
    };
    const c = cdn;
    const runUpdate = async (counted: boolean) => {
      const revision = await c.publish('build.tar.gz', sha);
      const r = await relaunch('update', revision);
      if (counted) update.push(r);
    };
    await readyServer(new Set(), 120_000);
    // Uncounted warm-up of each: loads the code paths, and leaves a full build in bin.prev.
    await runUpdate(false);
    await runFloor(false);
    for (let round = 0; round < opts.rounds; round++) {
      if (round % 2 === 0) {
        await runFloor(true);
        await runUpdate(true);
      } else {
        await runUpdate(true);
        await runFloor(true);
      }
    }

    const f = summarize(floor.map((r) => r.downtime));
    const u = summarize(update.map((r) => r.downtime));
    const within = (value: number, base: number) => value <= base + 100;
    const versus = (value: number, base: number) => {
      const over = value - base;
      const margin = over - 100;
      return `${over >= 0 ? '+' : ''}${over.toFixed(0)} ms against the floor; ${margin > 0 ? `${margin.toFixed(0)} ms over` : `${(-margin).toFixed(0)} ms inside`} the +100 ms target`;
    };
    figures.push(
      figure({
        name: `update downtime, old server's exit → new server checked in, p50 of ${u.n}`,
        value: u.p50,
        unit: 'ms',
        baselines: [{ name: 'plain relaunch (POST /restart, no update), p50', value: f.p50 }],
        target: '≤ floor + 100 ms',
        met: within(u.p50, f.p50),
        note: versus(u.p50, f.p50),
      }),
      figure({
        name: `update downtime, max of ${u.n}`,
        value: u.max,
        unit: 'ms',
        baselines: [{ name: 'plain relaunch, max', value: f.max }],
        target: '≤ floor + 100 ms',
        met: within(u.max, f.max),
        note: versus(u.max, f.max),
      }),
    );
    notes.push(
      `Build: ${build.files} files, ${(build.bytes / MB).toFixed(0)} MB unpacked (BENCH_UPDATE_MB=${opts.megabytes}), tar.gz ${(size / MB).toFixed(0)} MB, served by bench/servers/static-server.mjs on 127.0.0.1; generated and packed in ${genSeconds.toFixed(1)} s (not timed). Each update publishes a new build key in manifest.json (the same archive).`,
      `Downtime = the new server's \`ready\` stamp − the old server's \`exit\` stamp, both written by bench/servers/crash-server.mjs with performance.timeOrigin + performance.now() (one clock for every process): \`exit\` just before it exits after answering the watchdog's POST /update (update) or POST /shutdown (restart), \`ready\` when its first check-in is answered 200. Both therefore include Node starting the server, the same on both sides.`,
      `${opts.rounds} rounds after one uncounted update and restart; even rounds restart then update, odd ones update then restart. Before each request (not timed): wait until the daemon has removed the build the last update displaced (in the background, once the new server has checked in), then \`sync\`. The first build installed at daemon start is the same 200 MB build, so every counted update also moves a full old build out of bin.prev.`,
      `Where the time goes, median ms after the old server's exit (daemon points are the moments its log lines reached the bench) — update: ${medianPoints(update)}; restart: ${medianPoints(floor)}.`,
      `The daemon's file-system calls in the instance folder during the gap (median ms per run; bench/instrument/fs-timing.mjs loaded with \`node --import\` times node:fs/promises rm, rename, writeFile, unlink, rmdir and FileHandle.sync (fsync, shown as \`fsync (any file)\`); the calls on a displaced build's files are summed, and so are the fsyncs) — update: ${medianCalls(update)}; restart: ${medianCalls(floor)}.`,
      splitText(update, floor),
      `Every run (ms) — update: ${update.map((r) => r.downtime.toFixed(0)).join(', ')}; restart: ${floor.map((r) => r.downtime.toFixed(0)).join(', ')}.`,
    );
    return {
      id: 'downtime',
      title: '6. Update downtime',
      figures,
      notes,
      commands: [
        `update: bin/watchdog start (UpdateType: Manifest, ManifestUrl http://127.0.0.1:<port>/manifest.json); publish a new build; POST /instances/${KEY}/update`,
        `floor: the same daemon and server; POST /instances/${KEY}/restart`,
      ],
    };
  } finally {
    if (daemon) await daemon.stop(15_000);
    cdn?.stop();
    await tmp.cleanup();
  }
}
