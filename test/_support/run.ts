/**
 * `npm test`: runs the test files in a few worker processes, each file alone in its own `node` process (uvu runs
 * the file's suites as it does for one file), and prints one merged closing line. The files run from a compiled
 * copy of the sources (compile.ts: plain node starts each file for a fifth of tsx's CPU).
 *
 *   npm test                          every test/**\/*.test.ts but the real engine's and real watchdog's
 *   npm run test:peers                those: test/engine and test/peer
 *   npm test -- test/kit test/e2e/x.test.ts   only these folders and files
 *   TEST_JOBS=1 npm test              one file at a time
 *
 * Why files in processes: most of the suite's time is spent waiting on timers and child processes, not CPU, and a
 * file alone in its process cannot leak a timer, a listener or a global into the next one. A file whose first
 * lines hold `test-runner: alone` (with the reason) shares the machine with no other file: it runs after the
 * others, by itself. Each file has a deadline (TEST_FILE_TIMEOUT_MS, 300 s): past it its process group is ended
 * and the file counts as failed. uvu prints passes and skips but never "N failed", and swallows errors thrown in
 * hooks (lukeed/uvu#80, #191): a file counts as failed by its exit code and by the tests that did not pass.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { chromiumUnavailable, resolveChromium } from './chromium.ts';
import { COMPILED, compileTests } from './compile.ts';
import { ROOT } from './env.ts';
import { busySince, idleMeter } from './idle-cores.ts';
import { ensureDist } from './runtime.ts';
import { type FileCost, loadOf, mayStart, type Unit, units } from './schedule.ts';

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  seconds: number;
  /** CPU seconds of the file's process and of the processes it started and reaped (Linux; NaN elsewhere). */
  cpu: number;
  output: string;
}

/**
 * Loaded into each file's process: at exit it prints its CPU time, its own and its reaped children's (utime, stime,
 * cutime and cstime of /proc/self/stat, in clock ticks of 1/100 s), so the report can say where CPU goes. Workers
 * load it too (they inherit the flags), and a worker's exit is not the process's: only the main thread prints, or
 * a file whose update ran in a worker was reported at the CPU time of that moment.
 */
const CPU_PROBE = `data:text/javascript,${encodeURIComponent(`
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
if (isMainThread) process.on('exit', () => {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(f[i]), 0);
    process.stderr.write('\\ntest-runner-cpu: ' + ticks / 100 + '\\n');
  } catch {}
});`)}`;

const TEST_ROOT = join(ROOT, 'test');
/** The cores the files' average loads may fill (see schedule.ts), and at most this many files at once. */
const CORES = Number(process.env.TEST_CORES) || Math.max(2, availableParallelism());
const JOBS = Number(process.env.TEST_JOBS) || 3 * CORES;
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS) || 300_000;
/**
 * Each file's last duration and CPU time, so the longest start first and the loads are known next time; a fresh
 * clone starts from the costs measured on a two-core machine and kept in test/_support/costs.json.
 */
const COSTS = join(ROOT, 'node_modules/.cache/watchdog-tests/costs.json');
const SEED_COSTS = join(ROOT, 'test/_support/costs.json');
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI sequences this strips
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/**
 * The suites that run the real engine server and the real SS14.Watchdog (.NET programs from ../shared): `npm run
 * test:peers` runs them, and .ci/run does; `npm test` leaves them out (README "Tests and CI").
 */
const PEER_SUITES = [join(TEST_ROOT, 'engine'), join(TEST_ROOT, 'peer')];

/**
 * Every `*.test.ts` under `path` (a folder), or `path` itself (a file), outside `_support` and `fixtures` and the
 * folders in `leaveOut`.
 */
function collect(path: string, leaveOut: string[] = []): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const full = join(path, e.name);
      if (e.isDirectory()) {
        return e.name === '_support' || e.name === 'fixtures' || leaveOut.includes(full) ? [] : collect(full, leaveOut);
      }
      return e.name.endsWith('.test.ts') ? [full] : [];
    });
}

const sorted = <T>(o: Record<string, T>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

function readCosts(path: string): Record<string, FileCost> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, FileCost>;
  } catch {
    return {};
  }
}

/** Whether the file's first lines say `test-runner: <what>` (`alone`, `own process`), with the reason. */
function marked(file: string, what: string): boolean {
  return readFileSync(file, 'utf8').slice(0, 2000).includes(`test-runner: ${what}`);
}

/**
 * A folder for the run, removed at its end: what several files need made once (the packed package of test/dist/)
 * is made there by the first that asks, as WATCHDOG_TEST_RUN_DIR tells them.
 */
const RUN_DIR = mkdtempSync(join(tmpdir(), 'wd-test-run-'));
process.on('exit', () => rmSync(RUN_DIR, { recursive: true, force: true }));

const running = new Set<ChildProcess>();
/** Ends every file still running (each in its own process group) when the run itself is stopped. */
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) endGroup(child);
    process.exit(130);
  });
}

function endGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** A file's result from its uvu output, its exit code and what it cost. */
function resultOf(name: string, output: string, ok: boolean, seconds: number, cpu: number): FileResult {
  const text = plain(output);
  const num = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(text)?.[1] ?? Number.NaN);
  const total = num('Total');
  const passed = num('Passed');
  const skipped = num('Skipped') || 0;
  let failed = Number.isNaN(total) || Number.isNaN(passed) ? 1 : total - passed;
  if (failed === 0 && !ok) failed = 1;
  const note = Number.isNaN(total) ? `\n${name}: printed no uvu summary\n` : '';
  return {
    file: name,
    passed: Number.isNaN(passed) ? 0 : passed,
    failed,
    skipped,
    seconds,
    cpu,
    output: output + note,
  };
}

/** Closes each file's output in a batch (batch.ts): its exit code, seconds and CPU seconds. */
const FILE_END = /\ntest-runner-file: (\d+) ([\d.]+) ([\d.]+|NaN)\n/;

/**
 * Runs one file in its own process group, or several short ones one after another in one process (batch.ts); the
 * output is kept and printed whole per file when the process ends.
 */
function runGroup(files: string[]): Promise<FileResult[]> {
  const started = performance.now();
  const names = files.map((file) => relative(ROOT, file));
  const compiled = names.map((name) => join(COMPILED, `${name.slice(0, -3)}.js`));
  const entry = files.length === 1 ? compiled : [join(COMPILED, 'test/_support/batch.js'), ...compiled];
  return new Promise((done) => {
    // --liftoff-only: as in bin/runtime.js, a file's first fetch then costs a third of the CPU.
    const child: ChildProcess = spawn(
      process.execPath,
      ['--enable-source-maps', '--liftoff-only', '--import', CPU_PROBE, ...entry],
      {
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, FORCE_COLOR: '0', WATCHDOG_TEST_ROOT: ROOT, WATCHDOG_TEST_RUN_DIR: RUN_DIR },
      },
    );
    let output = '';
    const take = (d: Buffer) => {
      output += d.toString('utf8');
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    running.add(child);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      endGroup(child);
    }, FILE_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const cpu = Number(/\ntest-runner-cpu: ([\d.]+)\n/.exec(output)?.[1] ?? Number.NaN);
      let rest = output.replace(/\ntest-runner-cpu: [\d.]+\n/, '');
      const ended = timedOut
        ? `\nended after ${FILE_TIMEOUT_MS} ms (TEST_FILE_TIMEOUT_MS)\n`
        : `\nthe process ended (${code ?? signal})\n`;
      if (names.length === 1) {
        const seconds = (performance.now() - started) / 1000;
        done([resultOf(names[0]!, timedOut ? rest + ended : rest, code === 0 && !timedOut, seconds, cpu)]);
        return;
      }
      const results = names.map((name) => {
        const m = FILE_END.exec(rest);
        if (!m) {
          // Not closed: the process ended or was ended in this file (or before it).
          const text = rest === '' ? `\nnot run: the batch's process ended first${ended}` : rest + ended;
          rest = '';
          return resultOf(name, text, false, Number.NaN, Number.NaN);
        }
        const text = rest.slice(0, m.index);
        rest = rest.slice(m.index + m[0].length);
        return resultOf(name, text, m[1] === '0', Number(m[2]), Number(m[3]));
      });
      // The process's start (node, uvu, the first imports) is counted with its first file.
      results[0]!.cpu += cpu - results.reduce((n, r) => n + (r.cpu || 0), 0);
      done(results);
    });
  });
}

function report(r: FileResult): void {
  const counts = `${r.passed} passed${r.failed ? `, ${r.failed} FAILED` : ''}${r.skipped ? `, ${r.skipped} skipped` : ''}`;
  process.stdout.write(
    `${r.failed ? '✘' : '✓'} ${r.file} (${counts}, ${r.seconds.toFixed(1)} s, ${r.cpu.toFixed(2)} s CPU)\n`,
  );
  // A passing file's dots are noise; a failing one's whole output is the report, and so is a skip's reason.
  if (r.failed) process.stdout.write(`${r.output.trimEnd()}\n\n`);
  else if (r.skipped) process.stdout.write(`${skipReasons(r.output)}\n`);
}

/** The lines a file with skipped tests printed to say why (`… skipped: <reason>`), without uvu's dots and totals. */
const skipReasons = (output: string): string =>
  output
    .split('\n')
    .filter((l) => /skip/i.test(l) && !/^\s*Skipped:/.test(l))
    .map((l) => `  ${l.trim()}`)
    .join('\n');

/**
 * Runs `units` in order, each as soon as `mayStart` lets it beside the ones running (schedule.ts): when one ends,
 * and each second, when the machine's idle cores are read again.
 */
function pool(queue: Unit[], opts: { cores: number; maxJobs: number; load: (unit: Unit) => number }) {
  const loads = new Map<Unit, number>();
  const results: FileResult[] = [];
  const meter = idleMeter();
  return new Promise<FileResult[]>((allDone) => {
    const fill = () => {
      for (let unit = queue[0]; unit !== undefined; unit = queue[0]) {
        const load = opts.load(unit);
        if (!mayStart(load, [...loads.values()], { ...opts, idleCores: meter.idleCores })) break;
        queue.shift();
        meter.spend();
        loads.set(unit, load);
        const started = unit;
        void runGroup(unit.files).then((done) => {
          for (const r of done) report(r);
          results.push(...done);
          loads.delete(started);
          fill();
        });
      }
      if (loads.size === 0 && queue.length === 0) {
        clearInterval(sampling);
        allDone(results);
      }
    };
    const sampling = setInterval(() => {
      meter.sample();
      fill();
    }, 1000);
    fill();
  });
}

/** Other work on the machine, in cores on average over a run, beyond which the run's costs are not kept. */
const OTHER_WORK_CORES = 0.5;

/** Keeps the passing files' costs for the next run's schedule (and in the seed too, with TEST_RECORD_COSTS=1). */
function recordCosts(costs: Record<string, FileCost>, results: readonly FileResult[]): void {
  const round = (n: number) => Math.round(n * 10) / 10;
  for (const r of results) if (r.failed === 0) costs[r.file] = { seconds: round(r.seconds), cpu: round(r.cpu || 0) };
  mkdirSync(join(COSTS, '..'), { recursive: true });
  writeFileSync(COSTS, `${JSON.stringify(costs, null, 1)}\n`);
  if (process.env.TEST_RECORD_COSTS === '1') {
    // Only the files this run measured: a cost cached from another run (another machine's load, the peer suites
    // beside helpers' tests) would mislead every fresh clone's schedule.
    const seed = readCosts(SEED_COSTS);
    for (const r of results) if (r.failed === 0) seed[r.file] = costs[r.file]!;
    const kept = Object.entries(seed).filter(([file]) => existsSync(join(ROOT, file)));
    writeFileSync(SEED_COSTS, `${JSON.stringify(sorted(Object.fromEntries(kept)), null, 1)}\n`);
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const files = args.length ? args.flatMap((a) => collect(resolve(a))) : collect(TEST_ROOT, PEER_SUITES);
  const building = process.env.WATCHDOG_RUNTIME === undefined;
  const dashboards = files.some((f) => f.includes(join('e2e', 'dashboard')));
  // At once, as tsc (the build) runs on one core: the build, the test files' copy, and one unpacking of the bundled
  // browser before the workers start, so two files never unpack it at once.
  const [, , browser] = await Promise.all([
    building ? ensureDist() : undefined,
    compileTests(),
    dashboards ? resolveChromium() : undefined,
  ]);
  if (building) {
    // The files' processes use this build, and must not start another while others run from it.
    process.env.WATCHDOG_RUNTIME = 'dist';
    process.env.WATCHDOG_DIST_BUILT = '1';
  }
  if (browser === null) process.stdout.write(`dashboard suites skipped: ${chromiumUnavailable()}\n`);
  const costs = { ...readCosts(SEED_COSTS), ...readCosts(COSTS) };
  const costOf = (f: string) => costs[relative(ROOT, f)];
  // Without a last time, a file's size stands for its length: the end-to-end files are the long ones.
  const weight = (u: Unit) => u.cost?.seconds ?? statSync(u.files[0]!).size / 500;
  const alone = files.filter((f) => marked(f, 'alone'));
  const shared = units(
    files.filter((f) => !alone.includes(f)),
    costOf,
    (f) => !marked(f, 'own process'),
  ).sort((a, b) => weight(b) - weight(a));
  const started = performance.now();
  const machineBusy = busySince();
  const results = [
    ...(await pool(shared, { cores: CORES, maxJobs: JOBS, load: (u) => loadOf(u.cost) })),
    ...(await pool(
      alone.map((f) => ({ files: [f], cost: costOf(f) })),
      { cores: CORES, maxJobs: 1, load: () => 1 },
    )),
  ];

  const seconds = (performance.now() - started) / 1000;
  const cpuTotal = results.reduce((n, r) => n + (r.cpu || 0), 0);
  // Costs measured beside other work (a build, .ci/run's busy core) stretch every file's wall time, so its loads
  // would look lighter than they are and the next quiet run would start too many at once: such a run keeps the
  // costs it had. Other work is what kept the machine busy beyond the files' own CPU (Chromium's orphaned helpers
  // and the runner account for about a fifth of a core of a whole run, a dashboard file's alone for more): judged
  // over a minute at least, and where the files' CPU is known (Linux).
  const judged = seconds >= 60 && !results.some((r) => Number.isNaN(r.cpu));
  const otherCores = judged ? (machineBusy() - cpuTotal) / seconds : 0;
  if (otherCores > OTHER_WORK_CORES) {
    process.stdout.write(
      `\ncosts not recorded: other work kept ${otherCores.toFixed(1)} cores busy on average during the run\n`,
    );
  } else recordCosts(costs, results);

  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
  process.stdout.write(
    `\n${files.length} files, up to ${JOBS} at a time within ${CORES} cores (${alone.length} alone), ${seconds.toFixed(1)} s\n`,
  );
  process.stdout.write(
    `slowest test files (of ${cpuTotal.toFixed(0)} s CPU in all):\n${slowest.map((r) => `  ${r.seconds.toFixed(1).padStart(6)} s  ${r.cpu.toFixed(1).padStart(6)} s CPU  ${r.file}`).join('\n')}\n`,
  );
  const sum = (k: 'passed' | 'failed' | 'skipped') => results.reduce((n, r) => n + r[k], 0);
  const failedFiles = results.filter((r) => r.failed > 0).map((r) => r.file);
  if (failedFiles.length) process.stdout.write(`failed files:\n  ${failedFiles.join('\n  ')}\n`);
  process.stdout.write(`uvu: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped\n`);
  return sum('failed') > 0 || sum('passed') + sum('skipped') === 0 ? 1 : 0;
}

process.exitCode = await main();
