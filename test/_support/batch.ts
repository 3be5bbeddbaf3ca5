/**
 * Runs several short test files one after another in this one process, as uvu's own CLI does, for the runner
 * (run.ts): a process's start and its first imports cost more than most unit files' tests, and there are a hundred
 * such files. After each file a line `test-runner-file: <exit code> <seconds> <cpu seconds>` closes its output, so
 * the runner reports each file as if it had run alone. Usage: `node batch.js <file.js>…` (compiled test files).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

type Queue = unknown[][];
const uvuGlobals = globalThis as typeof globalThis & { UVU_DEFER?: number; UVU_INDEX?: number; UVU_QUEUE?: Queue };
// Before uvu loads: its suites then wait in UVU_QUEUE for exec() instead of running on their own.
uvuGlobals.UVU_DEFER = 1;
const { exec } = await import('uvu');
// uvu made it when it loaded.
const queue = uvuGlobals.UVU_QUEUE!;

/** CPU seconds of this process and its reaped children, as the runner's probe counts them (Linux; NaN elsewhere). */
function cpuSeconds(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return [11, 12, 13, 14].reduce((n, i) => n + Number(f[i]), 0) / 100;
  } catch {
    return Number.NaN;
  }
}

let failed = false;
for (const file of process.argv.slice(2)) {
  const started = performance.now();
  const cpu = cpuSeconds();
  queue.length = 0;
  queue.push([null]);
  uvuGlobals.UVU_INDEX = 0;
  process.exitCode = 0;
  try {
    await import(pathToFileURL(file).href);
    await exec();
  } catch (err) {
    process.stdout.write(`\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
  const code = Number(process.exitCode ?? 0);
  failed ||= code !== 0;
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`\ntest-runner-file: ${code} ${seconds.toFixed(3)} ${(cpuSeconds() - cpu).toFixed(2)}\n`);
}
process.exitCode = failed ? 1 : 0;
