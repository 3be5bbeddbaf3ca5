import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { killGroup } from './process-group.ts';

/**
 * Runs a helper program (git, a build, a backup's off-host copy): in its own process group so a cancelled or
 * timed-out run takes its children with it, with a time limit, and with its output teed to a log. Arguments never
 * hold secrets (`ps` shows them to every user); credentials travel in the environment.
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
  /** Written to its stdin (else it gets none). */
  input?: string;
  /** What runs, for messages: "git fetch", "the build command". */
  what: string;
  /** Makes the error a failure rejects with (default: Error), so each caller gets its own kind. */
  error?: (message: string, options?: ErrorOptions) => Error;
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

/** Runs `program args`; resolves with the exit status, rejects (`opts.error`) on spawn failure, timeout or cancel. */
export function runChild(program: string, args: string[], opts: RunOptions): Promise<RunResult> {
  const fail = opts.error ?? ((message: string, options?: ErrorOptions) => new Error(message, options));
  if (opts.signal.aborted) return Promise.reject(fail(`${opts.what} was cancelled`, { cause: opts.signal.reason }));
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.on('error', () => undefined); // a program that does not read its stdin is fine
    child.stdin?.end(opts.input);
    let stdout = '';
    let tail = '';
    let stopped: Error | null = null;
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

    const stop = (why: Error) => {
      if (stopped || exit) return;
      stopped = why;
      killGroup(child.pid, 'SIGTERM');
      escalate = setTimeout(() => killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    // Marked so a caller can tell the time limit from a failed start or a cancel (which carry a cause).
    const timedOut = () =>
      Object.assign(fail(`${opts.what} took longer than ${opts.timeoutMs / 1000} s and was stopped`), {
        timedOut: true,
      });
    const timer = setTimeout(() => stop(timedOut()), opts.timeoutMs);
    const onAbort = () => stop(fail(`${opts.what} was cancelled`, { cause: opts.signal.reason }));
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
      if (err) reject(fail(`could not start ${opts.what} (${program}): ${err.message}`, { cause: err }));
      else if (stopped) reject(stopped);
      else resolve({ code: exit?.code ?? null, signal: exit?.signal ?? null, stdout, tail: tail.trim() });
    };
    child.once('error', (err) => finish(err));
    child.once('exit', (code, sig) => {
      exit = { code, signal: sig };
      if (stopped) killGroup(child.pid, 'SIGKILL');
      drain = setTimeout(() => finish(), DRAIN_GRACE_MS);
    });
    child.once('close', () => finish());
  });
}

/** The last `count` lines of `text`. */
export function lastLines(text: string, count: number): string {
  return text.split('\n').slice(-count).join('\n');
}
