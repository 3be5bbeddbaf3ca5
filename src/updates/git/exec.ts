import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { UpdateError } from '../../errors.ts';

/**
 * Runs the Git provider's child processes (git, the build): in their own process group so a cancelled or timed-out
 * build takes its children with it, with a time limit, and with output teed to the build log. Arguments never hold
 * secrets (`ps` shows them to every user); credentials travel in the environment (git/remote.ts).
 */

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  timeoutMs: number;
  /** Receives stdout and stderr as they come (the build log); never ended here. */
  sink?: Writable;
  /** Keep stdout (for `rev-parse`, `ls-remote`); bounded. */
  captureStdout?: boolean;
  /** What runs, for messages: "git fetch", "the build command". */
  what: string;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** The last lines of stdout and stderr together, for error messages. */
  tail: string;
}

const KILL_GRACE_MS = 3_000;
/** After the leader exits, how long to wait for pipes that grandchildren (build servers) may keep open. */
const DRAIN_GRACE_MS = 1_000;
const STDOUT_LIMIT = 1 << 20;
const TAIL_CHARS = 2_000;

function killGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    // The group is already gone.
  }
}

/** Runs `program args`; resolves with the exit status, rejects with UpdateError on spawn failure, timeout or cancel. */
export function runChild(program: string, args: string[], opts: RunOptions): Promise<RunResult> {
  if (opts.signal.aborted)
    return Promise.reject(new UpdateError(`${opts.what} was cancelled`, { cause: opts.signal.reason }));
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let tail = '';
    let stopped: UpdateError | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    let escalate: NodeJS.Timeout | undefined;
    let drain: NodeJS.Timeout | undefined;

    const take = (chunk: Buffer, isStdout: boolean) => {
      opts.sink?.write(chunk);
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-TAIL_CHARS);
      if (isStdout && opts.captureStdout && stdout.length < STDOUT_LIMIT) stdout += text;
    };
    child.stdout?.on('data', (c: Buffer) => take(c, true));
    child.stderr?.on('data', (c: Buffer) => take(c, false));

    const stop = (why: UpdateError) => {
      if (stopped || exit) return;
      stopped = why;
      killGroup(child, 'SIGTERM');
      escalate = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(
      () => stop(new UpdateError(`${opts.what} took longer than ${opts.timeoutMs / 1000} s and was stopped`)),
      opts.timeoutMs,
    );
    const onAbort = () => stop(new UpdateError(`${opts.what} was cancelled`, { cause: opts.signal.reason }));
    opts.signal.addEventListener('abort', onAbort, { once: true });

    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(escalate);
      clearTimeout(drain);
      opts.signal.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (err) reject(new UpdateError(`could not start ${opts.what} (${program}): ${err.message}`, { cause: err }));
      else if (stopped) reject(stopped);
      else resolve({ code: exit?.code ?? null, signal: exit?.signal ?? null, stdout, tail: tail.trim() });
    };
    child.once('error', (err) => finish(err));
    child.once('exit', (code, sig) => {
      exit = { code, signal: sig };
      if (stopped) killGroup(child, 'SIGKILL');
      drain = setTimeout(() => finish(), DRAIN_GRACE_MS);
    });
    child.once('close', () => finish());
  });
}

/** Like `runChild`, but a non-zero exit is an UpdateError quoting the end of the output. */
export async function runChecked(
  program: string,
  args: string[],
  opts: RunOptions & { logHint?: string },
): Promise<RunResult> {
  const result = await runChild(program, args, opts);
  if (result.code !== 0) {
    const status = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    const output = result.tail ? `; its output ended with:\n${lastLines(result.tail, 8)}` : '';
    const hint = opts.logHint ? `\n(full output in ${opts.logHint})` : '';
    throw new UpdateError(`${opts.what} ${status}${output}${hint}`);
  }
  return result;
}

export function lastLines(text: string, count: number): string {
  return text.split('\n').slice(-count).join('\n');
}
