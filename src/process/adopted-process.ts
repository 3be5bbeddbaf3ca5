import { readlinkSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { followAppendedLog } from './appended-log.ts';
import { LOG_NAME, type LogRotation } from './log-file.ts';
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

/**
 * Follows the log of an adopted server while it runs, bounded as `spawnServer` does in persist mode, until the server
 * is gone or `stop()`. When our server.log was removed while it ran, its stdout (the removed file) is the one to
 * follow, through the proc link, as the daemon that launched it did.
 */
export function followAdoptedLog(opts: {
  pid: number;
  startTime: string | null;
  logDir: string;
  onLine: (line: string) => void;
  rotation: LogRotation;
  retryMs: number;
  health: WriteHealth;
}): { stop(): void } {
  const link = `/proc/${opts.pid}/fd/1`;
  let source: string | undefined;
  try {
    // The kernel names a removed file by the path it had, resolved; logs/ itself may be gone, its parent is not.
    const was = join(realpathSync(dirname(opts.logDir)), 'logs', LOG_NAME);
    if (readlinkSync(link) === `${was} (deleted)`) source = link;
  } catch {
    // Not Linux, not ours to read, or the server is gone: follow logs/server.log as usual.
  }
  const follower = followAppendedLog({ ...opts, outage: createWriteOutage(opts.retryMs, opts.health), source });
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
  }, 500);
  timer.unref();
  return { stop };
}
