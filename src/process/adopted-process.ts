import { readlinkSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { followAppendedLog } from './appended-log.ts';
import { DEFAULT_ROTATION, LOG_NAME, type LogRotation } from './log-file.ts';
import { DEFAULT_LOG_RETRY_MS } from './log-writer.ts';
import { isAlive, readProcessStartTime } from './proc-info.ts';
import { killGroup } from './process-group.ts';
import type { ServerProcess } from './spawn.ts';
import { createWriteOutage, type WriteHealth } from './write-outage.ts';

/**
 * Whether the adopted server still runs. A zombie counts as gone: the old daemon, its parent, is dead, and a
 * pid 1 that does not reap promptly (many containers) would otherwise keep it "alive" for ever. A different
 * start time means the pid now belongs to another process.
 */
async function stillRuns(pid: number, startTime: string | null): Promise<boolean> {
  if (!isAlive(pid)) return false;
  if (startTime === null) return true;
  const now = await readProcessStartTime(pid);
  return now === null || now === startTime;
}

/**
 * A server left running by the previous daemon (PersistServers): not our child, so its exit is polled for and its
 * status unknowable (code and signal null). Kills go to its group, and what is left of it goes once it exits.
 */
export function adoptedProcess(pid: number, startTime: string | null, pollMs = 500): ServerProcess {
  let timer: NodeJS.Timeout | undefined;
  let detached = false;
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const poll = async () => {
      timer = undefined;
      const runs = await stillRuns(pid, startTime).catch(() => true);
      if (detached) return;
      if (!runs) {
        // Checked right after the exit, while the group id cannot have been reused by an unrelated process.
        killGroup(pid, 'SIGKILL');
        resolve({ code: null, signal: null });
      } else timer = setTimeout(() => void poll(), pollMs);
    };
    void poll();
  });
  return {
    pid,
    startTime,
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      killGroup(pid, signal);
    },
    detach() {
      detached = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

export interface AdoptedLogOptions {
  pid: number;
  startTime: string | null;
  logDir: string;
  onLine: (line: string) => void;
  rotation?: LogRotation;
  pollMs?: number;
  retryMs?: number;
  health?: WriteHealth;
}

/**
 * The adopted server's stdout when it is our server.log removed while it ran, else null: that removed file is the
 * one to follow, through the proc link, as the daemon that launched it did.
 */
export function removedLogOf(pid: number, logDir: string): string | null {
  const link = `/proc/${pid}/fd/1`;
  try {
    // The kernel names a removed file by the path it had, resolved; logs/ itself may be gone, its parent is not.
    const was = join(realpathSync(dirname(logDir)), 'logs', LOG_NAME);
    return readlinkSync(link) === `${was} (deleted)` ? link : null;
  } catch {
    // Not Linux, not ours to read, or the server is gone: follow logs/server.log as usual.
    return null;
  }
}

/**
 * Follows the log of an adopted server while it runs, bounded as `spawnServer` does in persist mode. Stops by itself
 * once the server is gone; `stop()` ends it sooner.
 */
export function followAdoptedLog(opts: AdoptedLogOptions): { stop(): void } {
  const rotation = opts.rotation ?? DEFAULT_ROTATION;
  const retryMs = opts.retryMs ?? DEFAULT_LOG_RETRY_MS;
  const follower = followAppendedLog({
    logDir: opts.logDir,
    rotation,
    outage: createWriteOutage(retryMs, opts.health),
    onLine: opts.onLine,
    source: removedLogOf(opts.pid, opts.logDir) ?? undefined,
    intervalMs: opts.pollMs,
    retryMs,
    health: opts.health,
  });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    follower.stop();
  };
  const timer = setInterval(() => {
    void stillRuns(opts.pid, opts.startTime).then(
      (runs) => {
        if (!runs) stop();
      },
      () => undefined,
    );
  }, opts.pollMs ?? 500);
  timer.unref();
  return { stop };
}
