import { mkdirSync, truncateSync } from 'node:fs';
import { copyTruncate, logPath, type LogRotation } from './log-file.ts';
import type { WriteOutage } from './write-outage.ts';

/** What follows and bounds a server.log the server appends to itself (PersistServers). */
export interface AppendedLogBound {
  /** Called for each line the follower read, so a forced truncation knows how many it cost. */
  counted(): void;
  /** The follower's `onPoll`: rotates by copy-and-truncate once the file has reached its size. */
  onPoll(size: number): void;
}

/**
 * Keeps a server.log bounded that another process holds open with O_APPEND. When the copy to server.log.1 fails
 * (full disk, removed folder) the file is truncated anyway: the lines since the last rotation are lost and counted
 * as dropped, but the server can go on logging and the file cannot grow until the disk is full for good. The
 * outage ends at the next rotation that copies again.
 */
export function boundAppendedLog(logDir: string, rotation: LogRotation, outage: WriteOutage): AppendedLogBound {
  let lines = 0;
  return {
    counted: () => {
      lines += 1;
    },
    onPoll(size) {
      if (size < rotation.maxBytes) return;
      try {
        copyTruncate(logDir, rotation.keep);
        lines = 0;
        outage.succeeded();
      } catch (err) {
        try {
          mkdirSync(logDir, { recursive: true });
          truncateSync(logPath(logDir), 0);
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
