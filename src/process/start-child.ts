/** Starting a server's process, for both log modes of spawn.ts: the spawn, its errors, and the handle it gives. */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { LaunchBlockedError, ProcessError } from '../errors.ts';
import { inCgroup } from './cgroup.ts';
import { closeConsoleStdin, consoleStdin } from './console-fifo.ts';
import type { LaunchSpec } from './launch-spec.ts';
import type { LogRotation } from './log-file.ts';
import { marker } from './log-writer.ts';
import { readProcessStartTime } from './proc-info.ts';
import { killGroup } from './process-group.ts';
import { errorCode, type WriteHealth, type WriteOutage } from './write-outage.ts';

export interface ExitStatus {
  code: number | null;
  signal: string | null;
  /** The launch's memory limit (MB) when the kernel killed it there (its cgroup's `memory.events` `oom_kill`). */
  memoryLimitMB?: number;
}

/**
 * A launched game server, owned by one `runProcess` actor. `startTime` (null if it exited at once) verifies a
 * reattach; `exited` resolves once its output is read too, never rejects; `kill` signals the whole group (default
 * SIGKILL), never throws; `detach` lets the daemon exit while the server runs on (PersistServers).
 */
export interface ServerProcess {
  pid: number;
  startTime: string | null;
  exited: Promise<ExitStatus>;
  kill(signal?: NodeJS.Signals): void;
  detach(): void;
}

export interface SpawnOptions {
  logDir: string;
  /** Every output line; with `persist` both streams share one file and arrive as 'stdout'. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  /** PersistServers: the server writes straight to the log file (O_APPEND), never to a pipe. */
  persist: boolean;
  rotation?: LogRotation;
  /** How often the log file is polled in persist mode. */
  followMs?: number;
  retryMs?: number;
  health?: WriteHealth;
  /**
   * server.log's outage, kept by the caller across launches: a launch blocked for want of descriptors cannot open
   * the log either, and one outage over many such attempts is reported once. Absent: each launch has its own.
   */
  outage?: WriteOutage;
  cgroup?: string | null;
  /** The console FIFO's path: the server's standard input (absent: /dev/null). */
  console?: string | null;
}

/**
 * Errors of a launch that are about the daemon's resources, not the server: each is retried, never counted as a
 * startup failure. Node reports EMFILE, ENFILE and EAGAIN from spawn() as an 'error' event; ENOMEM is thrown.
 */
const RESOURCE_REASONS: Record<string, string> = {
  EMFILE: 'the watchdog is out of file descriptors (EMFILE)',
  ENFILE: 'the system is out of file descriptors (ENFILE)',
  EAGAIN: 'the system refused a new process for now (EAGAIN: a process or memory limit)',
  ENOMEM: 'the watchdog is out of memory to start a process (ENOMEM)',
};

/** The LaunchBlockedError for `err` when it (or its cause) is one of these (or one already); else null. */
export function resourceBlock(err: unknown): LaunchBlockedError | null {
  if (err instanceof LaunchBlockedError) return err;
  const code = [err, (err as { cause?: unknown } | null)?.cause].map(errorCode).find((c) => c !== 'error');
  const reason = code === undefined ? undefined : RESOURCE_REASONS[code];
  return reason === undefined ? null : new LaunchBlockedError('resources', reason, { cause: err });
}

const REASONS: Record<string, string> = {
  ENOENT: 'file not found',
  EACCES: 'permission denied (is it executable?)',
  ENOEXEC: 'not an executable format',
  ENOTDIR: 'a path component is not a folder',
  E2BIG: 'argument list too long',
};

function launchError(spec: LaunchSpec, err: unknown): ProcessError {
  const blocked = resourceBlock(err);
  if (blocked) return blocked;
  const code = errorCode(err);
  const why = REASONS[code] ?? (err instanceof Error ? err.message : String(err));
  return new ProcessError(`cannot launch ${spec.program}: ${code} (${why}) — check RunCommand`, { cause: err });
}

/** server.log's line at the end of each run. */
export function exitMarker(pid: number, status: ExitStatus): string {
  if (status.signal !== null) return marker(`server (pid ${pid}) killed by signal ${status.signal}`);
  return marker(
    status.code === null
      ? `server (pid ${pid}) ended, status unknown`
      : `server (pid ${pid}) exited with code ${status.code}`,
  );
}

/**
 * Starts the server with its output to `out` and the console (when on) as its stdin; `note` gets the daemon's lines
 * for server.log. In `opts.cgroup` a shell joins it and execs the server; a failure is what a direct spawn reports.
 */
export async function launchChild(
  spec: LaunchSpec,
  opts: Pick<SpawnOptions, 'cgroup' | 'console'>,
  out: 'pipe' | number | 'ignore',
  note: (line: string) => void,
): Promise<ChildProcess & { pid: number }> {
  const stdin = await consoleStdin(opts.console, (m) => note(marker(m)));
  let failure: unknown = null;
  try {
    failure = opts.cgroup ? await execError(spec.program) : null;
    if (failure === null) {
      const { file, args } = opts.cgroup
        ? inCgroup(opts.cgroup, spec.program, spec.args)
        : { file: spec.program, args: spec.args };
      // Node throws what it does not report as an 'error' event (ENOMEM among them): caught below.
      const child = spawn(file, args, {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: [stdin ?? 'ignore', out, out],
      });
      failure = await new Promise<Error | null>((resolve) => {
        child.once('spawn', () => resolve(null));
        child.once('error', resolve);
      });
      if (failure === null && child.pid !== undefined) return child as ChildProcess & { pid: number };
    }
  } catch (err) {
    failure = err;
  } finally {
    closeConsoleStdin(stdin);
  }
  const err = launchError(spec, failure);
  note(marker(err.message));
  throw err;
}

/**
 * The error spawn() would give for `program`, found before it is launched through the cgroup's shell, which would
 * report a missing or non-executable program only as exit 127 or 126. (A file without `#!` runs as a shell script
 * either way: libuv's execvp and the shell's `exec` both fall back to /bin/sh.) Null when it can be executed.
 */
export async function execError(program: string): Promise<NodeJS.ErrnoException | null> {
  try {
    await access(program, constants.X_OK);
    if (!(await stat(program)).isDirectory()) return null;
    return Object.assign(new Error(`EACCES: ${program} is a folder`), { code: 'EACCES', path: program });
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

export async function handleOf(pid: number, exited: Promise<ExitStatus>, detach: () => void): Promise<ServerProcess> {
  return {
    pid,
    startTime: await readProcessStartTime(pid),
    exited,
    kill: (signal) => killGroup(pid, signal),
    detach,
  };
}
