import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type RequestListener } from 'node:http';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { suite, type Test } from 'uvu';
import { ROOT, tempDir } from './env.ts';
import { serveLoopback } from './webhook.ts';

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

/** A loopback stand-in for the daemon answering with `handler`, and an empty folder to run the CLI in (no config). */
export async function standIn(
  handler: RequestListener,
  prefix: string,
): Promise<{ url: string; cwd: string; close: () => Promise<void> }> {
  const served = await serveLoopback(createServer(handler), '');
  const dir = await tempDir(prefix);
  return {
    url: served.url,
    cwd: dir.path,
    close: async () => {
      await served.close();
      await dir.cleanup();
    },
  };
}

/**
 * The CLI's `main(args)` run in this process as its own process would run it: in `cwd` (this process's by default),
 * with cliEnv's environment, `input` (or nothing) as its stdin, and its stdout and stderr captured. A CLI process
 * costs about 0.3 s of CPU to start and a hundred tests ask one something, so a test runs the command here unless
 * the process itself is what it checks (its exit status, signals, a command that runs until stopped): those spawn
 * the real bin (runCli, spawnCli), as test/cli/end-to-end.test.ts does for every command. One at a time: it takes
 * over the process's working folder, environment and standard streams while it runs, so a call made meanwhile
 * starts when it has finished; a command that has not finished `timeoutMs` after its start fails the test.
 */
export async function runMain(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const { main } = await import('../../src/cli/main.ts');
  const previous = mainQueue;
  let finished = () => {};
  mainQueue = new Promise((resolve) => (finished = resolve));
  await previous;
  const captured = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        captured[name] += chunk.toString('utf8');
        done();
      },
    });
  const streams = {
    stdin: Readable.from(opts.input === undefined ? [] : [opts.input]),
    stdout: sink('stdout'),
    stderr: sink('stderr'),
  };
  const saved = { cwd: process.cwd(), env: process.env };
  const descriptors = Object.keys(streams).map(
    (name) => [name, Object.getOwnPropertyDescriptor(process, name)!] as const,
  );
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    for (const [name, stream] of Object.entries(streams))
      Object.defineProperty(process, name, { value: stream, configurable: true });
    process.env = cliEnv(opts.env);
    if (opts.cwd !== undefined) process.chdir(opts.cwd);
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`watchdog ${args.join(' ')} has not finished after ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return { code: await Promise.race([main(args), hang]), ...captured };
  } finally {
    clearTimeout(timer);
    process.chdir(saved.cwd);
    process.env = saved.env;
    for (const [name, descriptor] of descriptors) Object.defineProperty(process, name, descriptor);
    finished();
  }
}
let mainQueue = Promise.resolve();
