import { stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { ProcessError } from '../errors.ts';
import type { LaunchSpec } from './launch-spec.ts';
import { DEFAULT_ROTATION, LineSplitter, type LogRotation, logPath } from './log-file.ts';
import { createRotatingLogWriter, marker } from './log-writer.ts';
import { reapStragglers } from './process-group.ts';
import type { Emit, ExitStatus, ServerProcess, SpawnOptions } from './server-process.ts';
import { spawnPersistent } from './spawn-persistent.ts';
import { exitMarker, handleOf, launchChild, resourceBlock } from './start-child.ts';

export type { ExitStatus, ServerProcess, SpawnOptions } from './server-process.ts';

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
      reapStragglers(pid, detached);
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
