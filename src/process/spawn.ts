import { spawn, type ChildProcess, type SpawnOptions as ChildSpawnOptions } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { ProcessError } from '../errors.ts';
import { inCgroup } from './cgroup.ts';
import { execError } from './exec-check.ts';
import { resourceBlock } from './launch-blocked.ts';
import type { LaunchSpec } from './launch-spec.ts';
import { followAppendedLog } from './appended-log.ts';
import { DEFAULT_ROTATION, LineSplitter, logPath, rotateIfFull, type LogRotation } from './log-file.ts';
import { DEFAULT_LOG_RETRY_MS, RotatingLogWriter, appendMarker, appendMarkerLine, marker } from './log-writer.ts';
import { WriteOutage, type WriteHealth } from './write-outage.ts';
import type { LogFollower } from './log-tail.ts';
import { readProcessStartTime } from './proc-info.ts';
import { killGroup, reapStragglers } from './process-group.ts';

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/** A launched game server, owned by one `runProcess` actor. */
export interface ServerProcess {
  pid: number;
  /** Kernel start time (see `readProcessStartTime`), for reattach verification; null if it exited at once. */
  startTime: string | null;
  /** Resolves once the process has exited (and its output has been read). Never rejects. */
  exited: Promise<ExitStatus>;
  /**
   * Signals the whole process group (default SIGKILL), so the server's children go too. Never throws.
   * Still useful after the leader exited: a group id cannot be reused while any member lives.
   */
  kill(signal?: NodeJS.Signals): void;
  /** Stops following output and lets the daemon exit while the server keeps running (PersistServers). */
  detach(): void;
}

export interface SpawnOptions {
  /** Folder for server.log and its rotations (normally `<instance>/logs`). */
  logDir: string;
  /** Every output line; with `persist` both streams share one file and arrive as 'stdout'. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  /**
   * PersistServers: the server writes straight to the log file (O_APPEND), never to a pipe, so it survives
   * the daemon. Rotation then happens at launch and, while attached, by copy-and-truncate.
   */
  persist: boolean;
  rotation?: LogRotation;
  /** Poll interval for following the log file in persist mode. */
  followMs?: number;
  /** While server.log cannot be written, how often to try again (`Timing.LogRetrySeconds`). */
  retryMs?: number;
  /** Told when server.log stops being written, how many lines are dropped, and when it works again. */
  health?: WriteHealth;
  /** A cgroup folder the server is put in before it runs (process tracking, `src/process/tracking.ts`). */
  cgroup?: string | null;
}

/** After 'exit', how long to wait for the pipes to drain; grandchildren may hold them open for ever. */
const DRAIN_GRACE_MS = 300;

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
  const code = (err as NodeJS.ErrnoException | null)?.code ?? 'error';
  const why = REASONS[code] ?? (err instanceof Error ? err.message : String(err));
  return new ProcessError(`cannot launch ${spec.program}: ${code} (${why}) — check RunCommand`, { cause: err });
}

/** The line server.log gets at the end of each run: `exited with code 0`, `killed by signal SIGKILL`. */
export function exitMarker(pid: number, status: ExitStatus): string {
  if (status.signal !== null) return marker(`server (pid ${pid}) killed by signal ${status.signal}`);
  return marker(
    status.code === null
      ? `server (pid ${pid}) ended, status unknown`
      : `server (pid ${pid}) exited with code ${status.code}`,
  );
}

/**
 * Spawns the server, inside `cgroup` when given (through a shell that joins it and then execs the server, so the pid
 * and command line are the server's), and waits for the outcome: a failure is what a direct spawn would report.
 */
async function startChild(
  spec: LaunchSpec,
  cgroup: string | null | undefined,
  options: ChildSpawnOptions,
): Promise<{ child: ChildProcess | null; failure: Error | null }> {
  if (cgroup) {
    const failure = await execError(spec.program);
    if (failure) return { child: null, failure };
  }
  const { file, args } = cgroup ? inCgroup(cgroup, spec.program, spec.args) : { file: spec.program, args: spec.args };
  let child: ChildProcess;
  try {
    child = spawn(file, args, options);
  } catch (err) {
    // Node throws what it does not report as an 'error' event (ENOMEM among them).
    return { child: null, failure: err instanceof Error ? err : new Error(String(err)) };
  }
  return { child, failure: await started(child) };
}

/** Waits for the outcome of spawn(): 'spawn' when exec succeeded, 'error' when it did not. */
function started(child: ChildProcess): Promise<Error | null> {
  return new Promise((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (err) => resolve(err));
  });
}

/**
 * Launches a game server in its own process group (`detached: true`), its output going to
 * `<logDir>/server.log`. Rejects with a ProcessError naming the program when it cannot be started, and with a
 * LaunchBlockedError (kind `resources`) when the daemon lacks the descriptors or memory to start it, whether the
 * spawn itself or opening the log said so.
 *
 * @example
 * const proc = await spawnServer(spec, { logDir: join(dir, 'logs'), persist: false, onLine: (s, l) => log.info(l) });
 * const { code, signal } = await proc.exited;
 */
export async function spawnServer(spec: LaunchSpec, opts: SpawnOptions): Promise<ServerProcess> {
  const rotation = opts.rotation ?? DEFAULT_ROTATION;
  const st = await stat(spec.cwd).catch(() => null);
  if (!st?.isDirectory()) {
    throw new ProcessError(
      `cannot launch ${spec.program}: its working directory ${spec.cwd} does not exist — check Servers.InstanceRoot`,
    );
  }
  const emit = (stream: 'stdout' | 'stderr', line: string) => {
    try {
      opts.onLine?.(stream, line);
    } catch {
      // A subscriber's bug must not stop the log.
    }
  };
  try {
    return await (opts.persist ? spawnPersistent(spec, opts, rotation, emit) : spawnPiped(spec, opts, rotation, emit));
  } catch (err) {
    throw resourceBlock(err) ?? err;
  }
}

type Emit = (stream: 'stdout' | 'stderr', line: string) => void;

async function spawnPiped(
  spec: LaunchSpec,
  opts: SpawnOptions,
  rotation: LogRotation,
  emit: Emit,
): Promise<ServerProcess> {
  const writer = new RotatingLogWriter(opts.logDir, rotation, { retryMs: opts.retryMs, health: opts.health });
  writer.writeLine(marker(`launching ${spec.program}`));
  const { child, failure } = await startChild(spec, opts.cgroup, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (failure || child?.pid === undefined) {
    const err = launchError(spec, failure);
    writer.writeLine(marker(err.message));
    writer.close();
    throw err;
  }
  const pid = child.pid;
  let detached = false;
  // Open until both pipes are drained and the run's end is written (after them, unless grandchildren hold the pipes).
  let open = 3;
  const closeWriter = () => {
    if (--open === 0) writer.close();
  };
  for (const [stream, readable] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    const splitter = new LineSplitter();
    const take = (line: string) => {
      writer.writeLine(line);
      emit(stream, line);
    };
    readable?.on('data', (chunk: Buffer) => splitter.push(chunk).forEach(take));
    readable?.once('close', () => {
      const last = splitter.flush();
      if (last !== null) take(last);
      closeWriter();
    });
  }
  const exited = new Promise<ExitStatus>((resolve) => {
    let status: ExitStatus | null = null;
    child.once('exit', (code, signal) => {
      reapStragglers(child, detached);
      status = { code, signal };
      setTimeout(() => resolve(status ?? { code, signal }), DRAIN_GRACE_MS).unref();
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve(status ?? { code, signal }));
  });
  void exited.then((status) => {
    if (!detached) writer.writeLine(exitMarker(pid, status));
    closeWriter();
  });
  return handleOf(child, pid, exited, () => {
    detached = true;
    // Pipes cannot be handed over: the server keeps writing to them while this daemon lives. Daemons
    // that must outlive their servers launch them with `persist`.
    child.unref();
    // Child pipes are net.Sockets at runtime; the typings only promise a Readable.
    for (const s of [child.stdout, child.stderr]) (s as Socket | null)?.unref();
  });
}

async function handleOf(
  child: ChildProcess,
  pid: number,
  exited: Promise<ExitStatus>,
  detach: () => void,
): Promise<ServerProcess> {
  return {
    pid,
    startTime: await readProcessStartTime(pid),
    exited,
    kill: (signal) => killGroup(child, signal),
    detach,
  };
}

async function spawnPersistent(
  spec: LaunchSpec,
  opts: SpawnOptions,
  rotation: LogRotation,
  emit: Emit,
): Promise<ServerProcess> {
  // The daemon's own lines (launch, exit) and forced truncations count against the same outage as a piped log's.
  const outage = new WriteOutage(opts.retryMs ?? DEFAULT_LOG_RETRY_MS, opts.health);
  let fd: number | null = null;
  try {
    mkdirSync(opts.logDir, { recursive: true });
    rotateIfFull(opts.logDir, rotation);
    fd = openSync(logPath(opts.logDir), 'a');
  } catch (err) {
    // The server still runs, its output discarded for this run: a log folder we cannot open is no reason to
    // leave the game down. The outage is reported; the next launch tries the folder again.
    outage.failed(err, 0);
  }
  let child: ChildProcess;
  let pid: number;
  let startOffset = 0;
  try {
    if (fd !== null) {
      try {
        writeSync(fd, marker(`launching ${spec.program}`) + '\n');
      } catch (err) {
        outage.failed(err, 1);
      }
      try {
        startOffset = fstatSync(fd).size;
      } catch {
        // A failing device: follow from the start of the file.
      }
    }
    const out = fd ?? 'ignore';
    const start = await startChild(spec, opts.cgroup, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    if (start.failure || start.child?.pid === undefined) {
      const err = launchError(spec, start.failure);
      if (!appendMarker(opts.logDir, err.message)) outage.drop(1);
      throw err;
    }
    child = start.child;
    pid = start.child.pid;
  } finally {
    // The child holds its own copy of the descriptor.
    if (fd !== null) closeSync(fd);
  }
  let detached = false;
  const follower: LogFollower = followAppendedLog({
    logDir: opts.logDir,
    rotation,
    outage,
    onLine: (line) => emit('stdout', line),
    startOffset,
    intervalMs: opts.followMs,
    retryMs: opts.retryMs,
    health: opts.health,
  });
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      reapStragglers(child, detached);
      follower.stop();
      // The file is the server's too (O_APPEND); once it is gone the run's end goes after its last line.
      // A log that cannot be written must not lose the exit: the line is counted as dropped instead.
      if (!detached && !appendMarkerLine(opts.logDir, exitMarker(pid, { code, signal }))) outage.drop(1);
      resolve({ code, signal });
    });
  });
  return handleOf(child, pid, exited, () => {
    detached = true;
    follower.stop();
    child.unref();
  });
}
