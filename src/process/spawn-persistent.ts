import type { ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, writeSync } from 'node:fs';
import { APPEND, openRegularSync } from '../regular-file.ts';
import { followAppendedLog } from './appended-log.ts';
import type { LaunchSpec } from './launch-spec.ts';
import { type LogRotation, logPath, rotateIfFull } from './log-file.ts';
import type { LogFollower } from './log-tail.ts';
import { appendMarkerLine, DEFAULT_LOG_RETRY_MS, marker } from './log-writer.ts';
import { reapStragglers } from './process-group.ts';
import type { Emit, ExitStatus, ServerProcess, SpawnOptions } from './server-process.ts';
import { exitMarker, handleOf, launchChild } from './start-child.ts';
import { createWriteOutage } from './write-outage.ts';

/**
 * PersistServers: the server writes straight to server.log (O_APPEND), never to a pipe, so it outlives the daemon;
 * the daemon follows the file for its own log and rotates it by copy-and-truncate.
 */
export async function spawnPersistent(
  spec: LaunchSpec,
  opts: SpawnOptions,
  rotation: LogRotation,
  emit: Emit,
): Promise<ServerProcess> {
  // The daemon's own lines (launch, exit) and forced truncations count against the same outage as a piped log's.
  const outage = opts.outage ?? createWriteOutage(opts.retryMs ?? DEFAULT_LOG_RETRY_MS, opts.health);
  let fd: number | null = null;
  try {
    mkdirSync(opts.logDir, { recursive: true });
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
      reapStragglers(pid, detached);
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
