/**
 * `npm test`: runs the test files in a few worker processes, each file alone in its own `node` process (uvu runs
 * the file's suites as it does for one file), and prints one merged closing line. The files run from a compiled
 * copy of the sources (compile.ts: plain node starts each file for a fifth of tsx's CPU).
 *
 *   npm test                          every test/**\/*.test.ts
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
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { chromiumUnavailable, resolveChromium } from './chromium.ts';
import { COMPILED, compileTests } from './compile.ts';
import { ROOT } from './env.ts';
import { ensureDist } from './runtime.ts';

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
 * cutime and cstime of /proc/self/stat, in clock ticks of 1/100 s), so the report can say where CPU goes.
 */
const CPU_PROBE = `data:text/javascript,${encodeURIComponent(`
import { readFileSync } from 'node:fs';
process.on('exit', () => {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(f[i]), 0);
    process.stderr.write('\\ntest-runner-cpu: ' + ticks / 100 + '\\n');
  } catch {}
});`)}`;

const TEST_ROOT = join(ROOT, 'test');
// One file per core: the suite is CPU-bound on two cores, and more at once only starve each file's deadlines.
const JOBS = Number(process.env.TEST_JOBS) || Math.max(2, availableParallelism());
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS) || 300_000;
/** Each file's last duration, so the longest start first next time (a fresh clone has none: see `weight`). */
const TIMINGS = join(ROOT, 'node_modules/.cache/watchdog-tests/timings.json');
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI sequences this strips
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** Every `*.test.ts` under `path` (a folder), or `path` itself (a file), outside `_support` and `fixtures`. */
function collect(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      if (e.isDirectory()) return e.name === '_support' || e.name === 'fixtures' ? [] : collect(join(path, e.name));
      return e.name.endsWith('.test.ts') ? [join(path, e.name)] : [];
    });
}

function readTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMINGS, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

function runsAlone(file: string): boolean {
  return /test-runner: alone/.test(readFileSync(file, 'utf8').slice(0, 2000));
}

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

/** Runs one file in its own process group; its output is kept and printed whole when it ends. */
function runFile(file: string): Promise<FileResult> {
  const started = performance.now();
  const name = relative(ROOT, file);
  return new Promise((done) => {
    const compiled = join(COMPILED, `${name.slice(0, -3)}.js`);
    const child: ChildProcess = spawn(process.execPath, ['--enable-source-maps', '--import', CPU_PROBE, compiled], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', WATCHDOG_TEST_ROOT: ROOT },
    });
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
      output = output.replace(/\ntest-runner-cpu: [\d.]+\n/, '');
      const text = plain(output);
      const num = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(text)?.[1] ?? Number.NaN);
      const total = num('Total');
      const passed = num('Passed');
      const skipped = num('Skipped') || 0;
      let failed = Number.isNaN(total) || Number.isNaN(passed) ? 1 : total - passed;
      if (failed === 0 && code !== 0) failed = 1;
      if (timedOut) output += `\n${name}: ended after ${FILE_TIMEOUT_MS} ms (TEST_FILE_TIMEOUT_MS)\n`;
      else if (Number.isNaN(total)) output += `\n${name}: printed no uvu summary (exit ${code ?? signal})\n`;
      done({
        file: name,
        passed: Number.isNaN(passed) ? 0 : passed,
        failed,
        skipped,
        seconds: (performance.now() - started) / 1000,
        cpu,
        output,
      });
    });
  });
}

function report(r: FileResult): void {
  const counts = `${r.passed} passed${r.failed ? `, ${r.failed} FAILED` : ''}${r.skipped ? `, ${r.skipped} skipped` : ''}`;
  process.stdout.write(`${r.failed ? '✘' : '✓'} ${r.file} (${counts}, ${r.seconds.toFixed(1)} s, ${r.cpu} s CPU)\n`);
  // A passing file's dots are noise; a failing one's whole output is the report, and so is a skip's reason.
  if (r.failed) process.stdout.write(`${r.output.trimEnd()}\n\n`);
}

async function pool(files: string[], jobs: number, results: FileResult[]): Promise<void> {
  const queue = [...files];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const r = await runFile(file);
      report(r);
      results.push(r);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker));
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const files = (args.length ? args.map((a) => resolve(a)) : [TEST_ROOT]).flatMap(collect);
  if (process.env.WATCHDOG_RUNTIME === undefined) {
    ensureDist();
    // The files' processes use this build, and must not start another while others run from it.
    process.env.WATCHDOG_RUNTIME = 'dist';
    process.env.WATCHDOG_DIST_BUILT = '1';
  }
  await compileTests();
  // One unpacking of the bundled browser before the workers start, so two files never unpack it at once.
  if (files.some((f) => f.includes(join('e2e', 'dashboard'))) && (await resolveChromium()) === null) {
    process.stdout.write(`dashboard suites skipped: ${chromiumUnavailable()}\n`);
  }
  const timings = readTimings();
  // Without a last time, a file's size stands for its length: the end-to-end files are the long ones.
  const weight = (f: string) => timings[relative(ROOT, f)] ?? statSync(f).size / 500;
  const byLastTime = (a: string, b: string) => weight(b) - weight(a);
  const alone = files.filter(runsAlone);
  const shared = files.filter((f) => !alone.includes(f)).sort(byLastTime);
  const started = performance.now();
  const results: FileResult[] = [];
  await pool(shared, JOBS, results);
  await pool(alone, 1, results);

  for (const r of results) timings[r.file] = Math.round(r.seconds * 10) / 10;
  mkdirSync(join(TIMINGS, '..'), { recursive: true });
  writeFileSync(TIMINGS, JSON.stringify(timings, null, 1));

  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
  process.stdout.write(
    `\n${files.length} files, ${JOBS} at a time (${alone.length} alone), ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  const cpuTotal = results.reduce((n, r) => n + (r.cpu || 0), 0);
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
