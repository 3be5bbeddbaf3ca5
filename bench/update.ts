/**
 * 3. Update pipeline: a ~200 MB build (tar.gz and zip) installed by the watchdog's Manifest provider from a
 * loopback static server, from POST /instances/<key>/update to the `update installed` log line (the build is in
 * bin/ and data.json has its revision), versus the shell doing the same job: curl -o, sha256sum -c, tar xzf / unzip.
 * Runs alternate (shell tgz, watchdog tgz, shell zip, watchdog zip) for three rounds; the daemon's RSS is sampled.
 * Then the daemon's extractor runs alone against tar xzf / unzip -q alone, and once under --cpu-prof.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileSize, generateBuild, packBuild, sha256File } from './lib/build-gen.ts';
import { type BenchCdn, manifestInstance, startCdn } from './lib/cdn.ts';
import { lightConfig, TOKEN } from './lib/config.ts';
import { profileText, summarizeProfile } from './lib/cpu-profile.ts';
import { type BenchDaemon, control, displacedBuildsGone, healthStates, startDaemon } from './lib/daemon.ts';
import { buildDist } from './lib/dist-build.ts';
import { BENCH, freePorts, ROOT } from './lib/env.ts';
import { journaledScratch } from './lib/journaled-fs.ts';
import { installServer } from './lib/launcher.ts';
import { type MemoryReading, readMemory, resetPeak } from './lib/proc.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { runBash } from './lib/shell.ts';
import { median } from './lib/stats.ts';
import { sleep, waitFor, wallNow } from './lib/wait.ts';

const MB = 1 << 20;
const KEY = 'upd';
/**
 * Most the daemon's install may take, as a multiple of the shell's `curl && sha256sum && tar|unzip` (median over
 * the rounds): the shell runs the three one after the other, the daemon hashes and unpacks while it downloads.
 * A zip's central directory sits at its end, so its entries can only be written once the last bytes are in: it
 * gains less than a tar.gz does.
 */
/** Never slower than the shell (issue 39): an operator sees downtime, not this ratio. */
const UPDATE_TARGET: Record<Format, number> = { tgz: 1.0, zip: 1.0 };

type Format = 'tgz' | 'zip';

/**
 * Writes every dirty page back before a timed run, so no side pays for the writeback of the one before it (each run
 * leaves about 400 MB of archive and build in the page cache; without this the second of a pair ran 0.3–0.4 s slower).
 */
const settle = (): Promise<number> => runBash('sync', {});

/** The shell pipelines; `date +%s%N` between the steps (a few ms in all) gives the phase split. */
const SHELL: Record<Format, string> = {
  tgz: 'set -e; a=$(date +%s%N); curl -sS -o "$D/dl" "$URL"; b=$(date +%s%N); echo "$SHA  $D/dl" | sha256sum -c --quiet -; c=$(date +%s%N); mkdir "$D/out"; tar xzf "$D/dl" -C "$D/out"; echo "$a $b $c $(date +%s%N)" > "$D/phases"',
  zip: 'set -e; a=$(date +%s%N); curl -sS -o "$D/dl" "$URL"; b=$(date +%s%N); echo "$SHA  $D/dl" | sha256sum -c --quiet -; c=$(date +%s%N); mkdir "$D/out"; unzip -q "$D/dl" -d "$D/out"; echo "$a $b $c $(date +%s%N)" > "$D/phases"',
};

interface Phases {
  [name: string]: number;
}

/**
 * Phases of one watchdog update from the moments its log lines arrived, put in the
 * order they happened, each named by the point that ends it. Order-independent on purpose: the Manifest provider
 * downloads and extracts during the check (before the server is told to leave) in one version and after it in
 * another; a point that never showed is left out.
 */
function phasesOf(start: number, points: Array<[string, number | undefined]>): Phases {
  const seen = points.filter((p): p is [string, number] => p[1] !== undefined).sort((a, b) => a[1] - b[1]);
  return between([['start', start], ...seen]);
}

/** Milliseconds from each named point to the previous one seen; a missing point leaves its phase out. */
function between(points: Array<[string, number | undefined]>): Phases {
  const out: Phases = {};
  let prev = points[0]?.[1];
  for (const [name, at] of points.slice(1)) {
    if (at === undefined) continue;
    if (prev !== undefined) out[name] = at - prev;
    prev = at;
  }
  return out;
}

function medianPhases(list: Phases[]): string {
  // Names in the order of the run that saw the most of them.
  const names = Object.keys(list.reduce((a, p) => (Object.keys(p).length > Object.keys(a).length ? p : a), {}));
  return names
    .map((n) => `${n} ${(median(list.map((p) => p[n] ?? NaN).filter(Number.isFinite)) / 1000).toFixed(2)} s`)
    .join(', ');
}

/** Each round's watchdog time over its shell time, then their median and range. */
function pairedRatios(watchdog: number[], shell: number[]): string {
  const ratios = watchdog.map((w, i) => w / (shell[i] ?? Number.NaN)).filter(Number.isFinite);
  const list = ratios.map((r) => r.toFixed(2)).join(', ');
  return `${list} (median ${median(ratios).toFixed(2)}, ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
}

const EXTRACT_ONLY: Record<Format, string> = {
  tgz: 'set -e; mkdir "$D/out"; tar xzf "$A" -C "$D/out"',
  zip: 'set -e; mkdir "$D/out"; unzip -q "$A" -d "$D/out"',
};

/** The daemon's extractor alone, in a fresh process (bench/tools/extract-once.ts); returns its own timing. */
function extractOnce(
  archive: string,
  dest: string,
  profDir: string | null,
): Promise<{ ms: number; from: number; to: number }> {
  return new Promise((resolve, reject) => {
    const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', ...prof, join(BENCH, 'tools/extract-once.ts'), archive, dest],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const m = /extracted ([\d.]+) from ([\d.]+) to ([\d.]+)/.exec(out);
      if (code === 0 && m) resolve({ ms: Number(m[1]), from: Number(m[2]), to: Number(m[3]) });
      else reject(new Error(`extract-once exited ${code}: ${out.slice(-500)}`));
    });
  });
}

/** Samples VmRSS every 20 ms until stopped; returns the highest reading. */
function rssSampler(pid: number): () => MemoryReading | null {
  let max = readMemory(pid);
  const timer = setInterval(() => {
    const m = readMemory(pid);
    if (m && (!max || m.rss > max.rss)) max = m;
  }, 20);
  return () => {
    clearInterval(timer);
    return max;
  };
}

export async function runUpdate(opts: {
  megabytes: number;
  rounds: number;
}): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const tmp = await journaledScratch('wd-bench-update-');
  const daemons: BenchDaemon[] = [];
  let cdn: BenchCdn | null = null;
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    const served = join(tmp.path, 'cdn');
    await mkdir(served);
    const genStart = Date.now();
    const build = await generateBuild(join(tmp.path, 'build-src'), opts.megabytes);
    const packed = await packBuild(join(tmp.path, 'build-src'), served);
    await rm(join(tmp.path, 'build-src'), { recursive: true, force: true });
    const tiny = join(tmp.path, 'tiny-src');
    await mkdir(tiny);
    await writeFile(join(tiny, 'build.txt'), 'tiny first build\n');
    const first = join(served, 'first.tar.gz');
    await new Promise<void>((resolve, reject) =>
      spawn('tar', ['-czf', first, '-C', tiny, '.']).once('exit', (c) =>
        c === 0 ? resolve() : reject(new Error(`tar exited ${c}`)),
      ),
    );
    const archives: Record<Format, { file: string; name: string; sha: string; size: number }> = {
      tgz: {
        file: packed.tgz,
        name: 'build.tar.gz',
        sha: await sha256File(packed.tgz),
        size: await fileSize(packed.tgz),
      },
      zip: { file: packed.zip, name: 'build.zip', sha: await sha256File(packed.zip), size: await fileSize(packed.zip) },
    };
    const firstSha = await sha256File(first);
    const genSeconds = (Date.now() - genStart) / 1000;

    cdn = await startCdn(served);
    const cdnUrl = cdn.url;
    const publish = cdn.publish;
    await publish('first.tar.gz', firstSha);

    const script = await installServer('light-server.mjs', tmp.path);
    const [port] = await freePorts(1);
    const wdDir = join(tmp.path, 'wd');
    await mkdir(wdDir);
    const buildMs = await buildDist();
    const daemon = await startDaemon(
      wdDir,
      lightConfig({
        script,
        instances: [{ key: KEY, port: port as number }],
        checkinSeconds: 1,
        timeoutSeconds: 30,
        instanceExtra: [...manifestInstance(cdn)],
      }),
      { env: { WATCHDOG_RUNTIME: 'dist' } },
    );
    daemons.push(daemon);
    const running = () =>
      waitFor(
        'the instance to run',
        async () => (await healthStates(daemon.url))[KEY] === 'server.running',
        60_000,
        50,
      );
    await running();

    const shellTimes: Record<Format, number[]> = { tgz: [], zip: [] };
    const wdTimes: Record<Format, number[]> = { tgz: [], zip: [] };
    const growth: number[] = [];
    const growthSplit: string[] = [];
    let firstRss: number | null = null;
    const shellPhases: Record<Format, Phases[]> = { tgz: [], zip: [] };
    const wdPhases: Record<Format, Phases[]> = { tgz: [], zip: [] };
    let peakNote = '';
    const shellRun = async (format: Format, round: number) => {
      const a = archives[format];
      const scratch = join(tmp.path, `shell-${format}-${round}`);
      await mkdir(scratch);
      await settle();
      shellTimes[format].push(await runBash(SHELL[format], { D: scratch, URL: `${cdnUrl}/${a.name}`, SHA: a.sha }));
      const ns = (await readFile(join(scratch, 'phases'), 'utf8'))
        .trim()
        .split(' ')
        .map((x) => Number(x) / 1e6);
      shellPhases[format].push(
        between([
          ['start', ns[0]],
          ['download', ns[1]],
          ['verify', ns[2]],
          ['extract', ns[3]],
        ]),
      );
      await rm(scratch, { recursive: true, force: true });
      await sleep(500);
    };
    const watchdogRun = async (format: Format) => {
      const a = archives[format];
      const revision = await publish(a.name, a.sha);
      await sleep(300); // the daemon settles after the previous relaunch
      await settle();
      const before = readMemory(daemon.pid);
      firstRss ??= before?.rss ?? null;
      const hwmReset = resetPeak(daemon.pid);
      const sample = rssSampler(daemon.pid);
      const done = daemon.waitForLine(new RegExp(`update installed.*revision=${revision}\\b`), 300_000);
      const failed = daemon.waitForLine(/update failed/, 300_000).then(({ line }) => {
        throw new Error(`the watchdog's update failed: ${line}`);
      });
      failed.catch(() => undefined);
      const logMark = daemon.lines().length;
      const t0 = wallNow();
      const status = await control(daemon.url, KEY, TOKEN, 'update');
      if (status !== 200) throw new Error(`POST /instances/${KEY}/update answered ${status}`);
      const { at } = await Promise.race([done, failed]);
      wdTimes[format].push(at - t0);
      const seen = daemon.lines().slice(logMark);
      const when = (re: RegExp) => seen.find((l) => re.test(l.line))?.at;
      wdPhases[format].push(
        phasesOf(t0, [
          ['manifest check', when(/fetching build from manifest|installing build from manifest/)],
          // A tar.gz is extracted while it downloads (one phase, ending at "downloaded and extracted"); a zip after.
          ['download + hash', when(/downloaded server archive/)],
          ['download + hash + extract to staging', when(/downloaded and extracted server archive/)],
          ['extract to staging', when(/update available/)],
          ['server exit + re-check', when(/installing update/)],
          ['swap + cleanup, to "update installed"', at],
        ]),
      );
      const maxRss = sample();
      const after = readMemory(daemon.pid);
      if (before && after) {
        const peak = Math.max(maxRss?.rss ?? 0, hwmReset ? after.hwm : 0);
        growth.push(peak - before.rss);
        growthSplit.push(
          maxRss
            ? `anon ${((maxRss.anon - before.anon) / MB).toFixed(1)} / file ${((maxRss.file - before.file) / MB).toFixed(1)}`
            : 'n/a',
        );
        if (!peakNote)
          peakNote = hwmReset
            ? 'peak = max(VmHWM after clear_refs reset, VmRSS sampled every 20 ms)'
            : 'peak = VmRSS sampled every 20 ms (clear_refs refused)';
      }
      const installed = (await readFile(join(wdDir, 'instances', KEY, 'bin', 'build.txt'), 'utf8')).trim();
      if (installed !== 'bench build') throw new Error(`bin/build.txt holds "${installed}" after the update`);
      await running();
      // The daemon removes the build this update displaced in the background; the next timed run starts after it.
      await waitFor('the displaced build to be removed', () => displacedBuildsGone(wdDir, KEY), 120_000, 100);
    };
    // Which side goes first alternates by round, so what one run leaves behind (freed pages, a relaunching server)
    // weighs on both alike.
    for (let round = 0; round < opts.rounds; round++) {
      for (const format of ['tgz', 'zip'] as const) {
        if (round % 2 === 0) {
          await shellRun(format, round);
          await watchdogRun(format);
        } else {
          await watchdogRun(format);
          await shellRun(format, round);
        }
      }
    }

    // Where the time goes: the extractor alone against tar xzf / unzip -q alone, alternating, then one profiled run.
    const extractOnly: Record<Format, { ours: number[]; tool: number[]; profile: string }> = {
      tgz: { ours: [], tool: [], profile: '' },
      zip: { ours: [], tool: [], profile: '' },
    };
    for (let round = 0; round < 2; round++) {
      for (const format of ['tgz', 'zip'] as const) {
        const scratch = join(tmp.path, `extract-${format}-${round}`);
        await mkdir(join(scratch, 'ours'), { recursive: true });
        await settle();
        extractOnly[format].tool.push(await runBash(EXTRACT_ONLY[format], { D: scratch, A: archives[format].file }));
        await settle();
        extractOnly[format].ours.push((await extractOnce(archives[format].file, join(scratch, 'ours'), null)).ms);
        await rm(scratch, { recursive: true, force: true });
      }
    }
    for (const format of ['tgz', 'zip'] as const) {
      const scratch = join(tmp.path, `extract-prof-${format}`);
      await mkdir(join(scratch, 'ours'), { recursive: true });
      const profDir = join(scratch, 'prof');
      const run = await extractOnce(archives[format].file, join(scratch, 'ours'), profDir);
      const summary = await summarizeProfile(profDir, { fromMs: run.from, toMs: run.to });
      if (summary) extractOnly[format].profile = profileText(summary);
      await rm(scratch, { recursive: true, force: true });
    }

    for (const format of ['tgz', 'zip'] as const) {
      const w = median(wdTimes[format]);
      const s = median(shellTimes[format]);
      const tool = format === 'tgz' ? 'curl && sha256sum -c && tar xzf' : 'curl && sha256sum -c && unzip -q';
      const limit = UPDATE_TARGET[format];
      figures.push(
        figure({
          name: `${format === 'tgz' ? 'tar.gz' : 'zip'}: POST /update → installed (median of ${wdTimes[format].length})`,
          value: w / 1000,
          unit: 's',
          baselines: [{ name: tool, value: s / 1000 }],
          target: `≤ ${limit.toFixed(1)}× shell`,
          met: w <= limit * s,
          note: w > limit * s ? `${(w / s).toFixed(2)}× the shell, over ${limit.toFixed(1)}×` : undefined,
        }),
      );
    }
    for (const format of ['tgz', 'zip'] as const) {
      const e = extractOnly[format];
      figures.push(
        figure({
          name: `${format === 'tgz' ? 'tar.gz' : 'zip'}: extraction alone, src/updates/archive/extract.ts in a fresh process (median of ${e.ours.length})`,
          value: median(e.ours) / 1000,
          unit: 's',
          baselines: [{ name: format === 'tgz' ? 'tar xzf' : 'unzip -q', value: median(e.tool) / 1000 }],
        }),
      );
    }
    const g = Math.max(...growth) / MB;
    figures.push(
      figure({
        name: 'daemon peak RSS growth during an update (worst run)',
        value: g,
        unit: 'MB',
        target: '≤ 64 MB',
        met: g <= 64,
        note: g > 64 ? `${(g - 64).toFixed(1)} MB over` : undefined,
      }),
    );
    notes.push(
      'Watchdog phases, in the order they happened, each named by the point that ends it: from its log lines (`fetching build from manifest`, `downloaded server archive` (zip) or `downloaded and extracted server archive` (tar.gz, extracted as it downloads), `update available`, `installing update`, `update installed`) (the moment each line reached the bench). A line that did not show leaves its phase out of that run.',
      `Build: ${build.files} files, ${(build.bytes / MB).toFixed(0)} MB unpacked (BENCH_UPDATE_MB=${opts.megabytes}); tar.gz ${(archives.tgz.size / MB).toFixed(0)} MB, zip ${(archives.zip.size / MB).toFixed(0)} MB. Generated and packed in ${genSeconds.toFixed(1)} s (not timed).`,
      `File system: everything (the served archives, the shell's folders, the daemon's instance) is on ${tmp.fs}; bench/lib/journaled-fs.ts says why.`,
      `Both sides download from the same loopback static server (bench/servers/static-server.mjs), verify the SHA-256 and extract to the same disk, each after a \`sync\` (not timed) so that neither pays for the writeback of the run before it. ${opts.rounds} rounds (BENCH_UPDATE_ROUNDS), each format shell-then-watchdog in even rounds and watchdog-then-shell in odd ones; figures are medians. The shell baseline runs in a fresh folder each time; the watchdog installs into its instance (a zip is downloaded to .update/ and then extracted to staging; a tar.gz is extracted to staging as it downloads, with no copy on disk; then swap bin → bin.prev; the build before that is removed in the background).`,
      `The watchdog is the compiled daemon, as the package and the image run it (\`npm run build\`, ${(buildMs / 1000).toFixed(1)} s, not timed; then \`WATCHDOG_RUNTIME=dist node bin/watchdog start\`): run from a checkout's sources through tsx, its update worker (src/updates/fetch/off-thread.ts) compiles its modules again at every update, some 0.2 to 0.3 s more.`,
      "The watchdog's time includes what only it does: the update check (manifest fetch), POST /update to the running server and its exit, a second manifest fetch before the install, the swap, and data.json; the build the swap displaces from bin.prev is removed in the background after the launch, and the next run waits for that (not timed). Its download, hash and extraction run during the check, while the old server still runs (the server is only told to leave once the new build is staged).",
      `RSS: ${peakNote}; growth = peak − VmRSS just before POST /update. Each of the ${growth.length} runs, in order: ${growth.map((b, i) => `${(b / MB).toFixed(1)} MB (at the highest sample: ${growthSplit[i]} MB)`).join('; ')}. The daemon's RSS before the first run: ${firstRss === null ? 'n/a' : `${(firstRss / MB).toFixed(1)} MB`}.`,
      `Phases, medians — tar.gz shell: ${medianPhases(shellPhases.tgz)}; watchdog: ${medianPhases(wdPhases.tgz)}. zip shell: ${medianPhases(shellPhases.zip)}; watchdog: ${medianPhases(wdPhases.zip)}.`,
      `CPU profile of src/updates/archive/extract.ts extracting the tar.gz alone (\`node --cpu-prof bench/tools/extract-once.ts\`, main thread, extraction window only; idle = waiting for the thread pool or the disk): ${extractOnly.tgz.profile}`,
      `Same for the zip: ${extractOnly.zip.profile}`,
      `Shell runs (s): tgz ${shellTimes.tgz.map((t) => (t / 1000).toFixed(2)).join(', ')}; zip ${shellTimes.zip.map((t) => (t / 1000).toFixed(2)).join(', ')}. Watchdog runs (s): tgz ${wdTimes.tgz.map((t) => (t / 1000).toFixed(2)).join(', ')}; zip ${wdTimes.zip.map((t) => (t / 1000).toFixed(2)).join(', ')}.`,
      `Watchdog ÷ shell within each round (the two runs minutes apart at most, so sharing the machine's state): tgz ${pairedRatios(wdTimes.tgz, shellTimes.tgz)}; zip ${pairedRatios(wdTimes.zip, shellTimes.zip)}. How far these spread is how far a median of them can be trusted.`,
    );
    return {
      id: 'update',
      title: '3. Update pipeline',
      figures,
      notes,
      commands: [
        `watchdog: bin/watchdog start (UpdateType: Manifest, ManifestUrl http://127.0.0.1:<port>/manifest.json); POST /instances/${KEY}/update`,
        `shell tar.gz: bash -c '${SHELL.tgz}'`,
        `shell zip: bash -c '${SHELL.zip}'`,
        'extraction alone: node --import tsx bench/tools/extract-once.ts <archive> <dest> versus tar xzf <archive> -C <dest> and unzip -q <archive> -d <dest>',
      ],
    };
  } finally {
    for (const d of daemons) await d.stop(15_000);
    cdn?.stop();
    await tmp.cleanup();
  }
}
