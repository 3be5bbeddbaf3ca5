import type { ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, writeSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { ProcessError } from '../errors.ts';
import { makeDirSync } from '../make-dir.ts';
import { APPEND, openRegularSync } from '../regular-file.ts';
import { followAppendedLog } from './appended-log.ts';
import type { LaunchSpec } from './launch-spec.ts';
import { DEFAULT_ROTATION, LineSplitter, type LogRotation, logPath, rotateIfFull } from './log-file.ts';
import { appendMarkerLine, createRotatingLogWriter, marker } from './log-writer.ts';
import { killGroup } from './process-group.ts';
import {
  type ExitStatus,
  exitMarker,
  handleOf,
  launchChild,
  resourceBlock,
  type ServerProcess,
  type SpawnOptions,
} from './start-child.ts';
import { createWriteOutage } from './write-outage.ts';

export type { ExitStatus, ServerProcess, SpawnOptions } from './start-child.ts';

type Emit = NonNullable<SpawnOptions['onLine']>;

/** After 'exit', how long to wait for the pipes to drain; grandchildren may hold them open for ever. */
const DRAIN_GRACE_MS = 300;

/**
 * Launches a game server in its own process group, its output going to `<logDir>/server.log`. Rejects with a
 * ProcessError naming the program, or a LaunchBlockedError (`resources`).
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

async function spawnPiped(
  spec: LaunchSpec,
  opts: SpawnOptions,
  rotation: LogRotation,
  emit: Emit,
): Promise<ServerProcess> {
  const writer = createRotatingLogWriter(logPath(opts.logDir), rotation, {
    retryMs: opts.retryMs,
    health: opts.health,
    outage: opts.outage,
  });
  writer.writeLine(marker(`launching ${spec.program}`));
  const child = await launchChild(spec, opts, 'pipe', (line) => writer.writeLine(line)).catch((err: unknown) => {
    writer.close();
    throw err;
  });
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
      // What is left of its group would hold the game's ports against the next launch: killed now, while the group
      // id cannot have been reused (not after `detach()`; one that left the group is process tracking's).
      if (!detached) killGroup(pid, 'SIGKILL');
      status = { code, signal };
      setTimeout(() => resolve(status ?? { code, signal }), DRAIN_GRACE_MS).unref();
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve(status ?? { code, signal }));
  });
  void exited.then((status) => {
    if (!detached) writer.writeLine(exitMarker(pid, status));
    closeWriter();
  });
  return handleOf(pid, exited, () => {
    detached = true;
    // Pipes cannot be handed over (daemons that must outlive their servers launch them with `persist`).
    child.unref();
    // Child pipes are net.Sockets at runtime; the typings only promise a Readable.
    for (const s of [child.stdout, child.stderr]) (s as Socket | null)?.unref();
  });
}

/**
 * PersistServers: the server writes straight to server.log (O_APPEND), never to a pipe, so it outlives the daemon;
 * the daemon follows the file for its own log and rotates it by copy-and-truncate.
 */
async function spawnPersistent(
  spec: LaunchSpec,
  opts: SpawnOptions,
  rotation: LogRotation,
  emit: Emit,
): Promise<ServerProcess> {
  // The daemon's own lines (launch, exit) and forced truncations count against the same outage as a piped log's.
  const outage = opts.outage ?? createWriteOutage(opts.retryMs, opts.health);
  let fd: number | null = null;
  try {
    makeDirSync(opts.logDir);
    rotateIfFull(logPath(opts.logDir), rotation);
    // The server can leave a named pipe there: refused at once (an outage), never waited on.
    fd = openRegularSync(logPath(opts.logDir), APPEND).fd;
  } catch (err) {
    // The server still runs, its output discarded for this run: a log folder we cannot open is no reason to
    // leave the game down. The outage is reported; the next launch tries the folder again.
    outage.failed(err, 0);
  }
  let child: ChildProcess & { pid: number };
  let startOffset = 0;
  try {
    if (fd !== null) {
      try {
        writeSync(fd, marker(`launching ${spec.program}`) + '\n');
        outage.succeeded();
      } catch (err) {
        outage.failed(err, 1);
      }
      try {
        startOffset = fstatSync(fd).size;
      } catch {
        // A failing device: follow from the start of the file.
      }
    }
    child = await launchChild(spec, opts, fd ?? 'ignore', (line) => {
      if (!appendMarkerLine(opts.logDir, line)) outage.drop(1);
    });
  } finally {
    // The child holds its own copy of the descriptor.
    if (fd !== null) closeSync(fd);
  }
  const { pid } = child;
  let detached = false;
  const follower = followAppendedLog({
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
      if (!detached) killGroup(pid, 'SIGKILL'); // as a piped launch's
      follower.stop();
      // The file is the server's too (O_APPEND); once it is gone the run's end goes after its last line.
      // A log that cannot be written must not lose the exit: the line is counted as dropped instead.
      if (!detached && !appendMarkerLine(opts.logDir, exitMarker(pid, { code, signal }))) outage.drop(1);
      resolve({ code, signal });
    });
  });
  return handleOf(pid, exited, () => {
    detached = true;
    follower.stop();
    child.unref();
  });
}
