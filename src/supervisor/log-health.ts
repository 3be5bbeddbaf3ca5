import type { Bus } from '../bus.ts';
import type { ResolvedConfig } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import type { LogRotation } from '../process/log-file.ts';
import type { WriteHealth } from '../process/write-outage.ts';

/** The rotation `Logs.ServerLogMaxBytes` / `Logs.ServerLogFiles` configure. */
export function serverLogRotation(config: ResolvedConfig): LogRotation {
  return { maxBytes: config.settings.Logs.ServerLogMaxBytes, keep: config.settings.Logs.ServerLogFiles };
}

/** `Timing.LogRetrySeconds` in ms. */
export function logRetryMs(config: ResolvedConfig): number {
  return config.timing.LogRetrySeconds * 1000;
}

/**
 * Reports a server log's outages: one line in the daemon's log when its lines start being dropped and one when it is
 * written again (with the count), and the facts on the bus for metrics (`watchdog_log_lines_dropped_total`).
 */
export function serverLogHealth(key: string, file: string, bus: Bus, log: Logger, retryMs: number): WriteHealth {
  return {
    onFailing(code, message) {
      log.error(
        `cannot write ${file} (${code}): dropping its lines and counting them, trying again every ${retryMs / 1000} s; ` +
          'free space on that file system or fix the folder and it resumes by itself',
        { error: message },
      );
      bus.emit('log:failing', { key, file, code, message, at: Date.now() });
    },
    onDropped(lines) {
      bus.emit('log:dropped', { key, lines, at: Date.now() });
    },
    onResumed(dropped) {
      log.info(`writing ${file} again; ${dropped} line(s) were dropped meanwhile`, { dropped });
      bus.emit('log:resumed', { key, file, dropped, at: Date.now() });
    },
  };
}
