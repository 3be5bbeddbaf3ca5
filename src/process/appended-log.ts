import { truncateSync } from 'node:fs';
import { makeDirSync } from '../make-dir.ts';
import { copyTruncate, type LogRotation, logPath } from './log-file.ts';
import { followLog, type LogFollower } from './log-tail.ts';
import { createRotatingLogWriter, type RotatingLogWriter } from './log-writer.ts';
import type { WriteHealth, WriteOutage } from './write-outage.ts';

/**
 * Keeps a server.log bounded that another process holds open with O_APPEND. When the copy to server.log.1 fails the
 * file is truncated anyway (the lines since the last rotation are counted as dropped): it cannot fill the disk.
 */
export function boundAppendedLog(logDir: string, rotation: LogRotation, outage: WriteOutage) {
  let lines = 0;
  /** The size at the previous poll; unknown at the first (an adopted file's size is no growth). */
  let last: number | null = null;
  return {
    /** Each line the follower read: a forced truncation knows how many it cost. */
    counted: () => {
      lines += 1;
    },
    /**
     * Rotates by copy-and-truncate once the file has reached its size, or would before the next poll. `held`, the
     * follower's own descriptor, empties it when the copy fails for want of descriptors (a truncation by path would too).
     */
    onPoll(size: number, emptied?: () => void, held?: { truncate(): void }): void {
      // Rotating only once the size is reached leaves the file a poll's worth of output past it: a server printing
      // 1 MB/s overshoots by 250 kB. Rotating when the next poll would pass it keeps the file near its bound.
      const growth = last === null ? 0 : Math.max(0, size - last);
      last = size;
      if (size + growth < rotation.maxBytes) return;
      try {
        copyTruncate(logPath(logDir), rotation.keep, rotation.maxBytes, rotation.retention);
        last = 0;
        emptied?.();
        lines = 0;
        outage.succeeded();
      } catch (err) {
        try {
          if (held) held.truncate();
          else {
            makeDirSync(logDir);
            truncateSync(logPath(logDir), 0);
            emptied?.();
          }
          last = 0;
          outage.failed(err, lines);
          lines = 0;
        } catch (again) {
          // Not even a truncation works (read-only, gone): nothing was lost yet; the next poll tries again.
          outage.failed(again, 0);
        }
      }
    },
  };
}

/**
 * Follows a server.log the server appends to itself (PersistServers). A file removed while the server writes to it
 * would grow unseen for ever: its lines are copied into a new server.log and it is emptied at the rotation size.
 */
export function followAppendedLog(opts: {
  logDir: string;
  rotation: LogRotation;
  /** The outage the daemon's own lines to this log count against too. */
  outage: WriteOutage;
  onLine: (line: string) => void;
  startOffset?: number;
  source?: string;
  intervalMs?: number;
  retryMs?: number;
  health?: WriteHealth;
}): LogFollower {
  const { logDir, rotation, outage } = opts;
  const bound = boundAppendedLog(logDir, rotation, outage);
  let copy: RotatingLogWriter | null = null;
  const follower = followLog(
    logDir,
    (line) => {
      bound.counted();
      copy?.writeLine(line);
      opts.onLine(line);
    },
    {
      startOffset: opts.startOffset,
      source: opts.source,
      intervalMs: opts.intervalMs,
      followRenames: false,
      onPoll(size, file) {
        if (!file.orphaned) return bound.onPoll(size, file.emptied, file);
        if (!copy) {
          outage.failed(Object.assign(new Error(`${logPath(logDir)} was removed`), { code: 'ENOENT' }), 0);
          copy = createRotatingLogWriter(logPath(logDir), rotation, { retryMs: opts.retryMs, health: opts.health });
          outage.succeeded();
        }
        if (size < rotation.maxBytes) return;
        try {
          file.truncate();
        } catch (err) {
          // Not on Linux, or the proc link is gone: the removed file grows until the server exits.
          outage.failed(err, 0);
        }
      },
    },
  );
  return {
    poll: follower.poll,
    stop() {
      follower.stop();
      copy?.close();
    },
  };
}
