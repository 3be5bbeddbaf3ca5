import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { suite, type Test } from 'uvu';
import { ROOT, tempDir } from './env.ts';

export const WATCHDOG = join(ROOT, 'bin/watchdog');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI environment without the caller's WATCHDOG_TOKEN/NO_COLOR leaking into the test. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (!('WATCHDOG_TOKEN' in extra)) delete env.WATCHDOG_TOKEN;
  if (!('NO_COLOR' in extra)) delete env.NO_COLOR;
  return env;
}

export interface RunningCli {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<CliResult>;
}

/** Starts `node bin/watchdog <args>` as a real process; the caller must await `exited` (or kill it by pid). */
export function spawnCli(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; input?: string },
): RunningCli {
  const proc = spawn(process.execPath, [WATCHDOG, ...args], {
    cwd: opts.cwd,
    env: cliEnv(opts.env),
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  // What a pipe would give it (`printf pw | watchdog user add …`), then the end of input.
  if (opts.input !== undefined) proc.stdin!.end(opts.input);
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<CliResult>((resolve) => proc.once('close', (code) => resolve({ code, stdout, stderr })));
  return { proc, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs the CLI to completion; SIGKILLs it after `timeoutMs` so a hung command fails the test instead of the run. */
export async function runCli(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number; input?: string },
): Promise<CliResult> {
  const cli = spawnCli(args, opts);
  const timer = setTimeout(() => cli.proc.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
  const result = await cli.exited;
  clearTimeout(timer);
  return result;
}

/** A suite whose tests share one temp folder, `ctx.cwd`, to run the CLI in; it is removed after the suite. */
export function cliSuite(name: string, prefix: string): Test<{ cwd: string }> {
  const s = suite<{ cwd: string }>(name, { cwd: '' });
  let cleanup = async () => {};
  s.before(async (ctx) => {
    const t = await tempDir(prefix);
    ctx.cwd = t.path;
    cleanup = t.cleanup;
  });
  s.after(() => cleanup());
  return s;
}

/**
 * The CLI's `main(args)` run in this process, its output captured: for what depends on the arguments alone (usage
 * texts, usage errors), where a process's start would cost far more than the answer. Not concurrently: it takes
 * over process.stdout and process.stderr while it runs. Tests of the real bin spawn it (runCli).
 */
export async function runMain(args: string[]): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.ts');
  const captured = { stdout: '', stderr: '' };
  const streams = { stdout: process.stdout, stderr: process.stderr } as const;
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  for (const name of ['stdout', 'stderr'] as const) {
    streams[name].write = ((chunk: string | Uint8Array) => {
      captured[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    }) as typeof process.stdout.write;
  }
  try {
    return { code: await main(args), ...captured };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
  }
}
