import { join } from 'node:path';
import type { Bus } from '../bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import type { LogRotation } from '../process/log-file.ts';
import { createWriteOutage, type WriteHealth, type WriteOutage } from '../process/write-outage.ts';
import { retentionRule } from '../store/retention.ts';

/** How a server's log is written, for a launch and an adopted server alike. */
export function serverLogOptions(config: ResolvedConfig, instance: ResolvedInstance, bus: Bus) {
  const logDir = join(instance.dir, 'logs');
  const rule = instance.settings.Retention.Logs;
  const rotation: LogRotation = {
    maxBytes: config.settings.Logs.ServerLogMaxBytes,
    keep: config.settings.Logs.ServerLogFiles,
    ...(rule === undefined ? {} : { retention: retentionRule(rule) }),
  };
  const health = serverLogHealth(instance.key, join(logDir, 'server.log'), bus);
  return { logDir, rotation, retryMs: config.timing.LogRetrySeconds * 1000, health };
}

/** Puts a server log's outages on the bus. */
function serverLogHealth(key: string, file: string, bus: Bus): WriteHealth {
  return {
    onFailing: (code, message) => bus.emit('instance:log-failing', { key, file, code, message, at: Date.now() }),
    onDropped: (lines) => bus.emit('instance:log-dropped', { key, lines, at: Date.now() }),
    onResumed: (dropped) => bus.emit('instance:log-resumed', { key, file, dropped, at: Date.now() }),
  };
}

/**
 * server.log's outage, one for all of an instance's launches: a relaunch blocked for want of descriptors cannot open
 * the log either, and the outage is then told once for the episode instead of once per attempt.
 */
export function serverLogOutage(key: string, bus: Bus): (logDir: string, retryMs: number) => WriteOutage {
  let held: { file: string; retryMs: number; outage: WriteOutage } | null = null;
  return (logDir, retryMs) => {
    const file = join(logDir, 'server.log');
    if (held?.file !== file || held.retryMs !== retryMs)
      held = { file, retryMs, outage: createWriteOutage(retryMs, serverLogHealth(key, file, bus)) };
    return held.outage;
  };
}

/**
 * A timestamp a server put at the start of its own line (`2026-11-28T00:07:53.531Z`, `[2026-11-28 00:07:53,531]`).
 * The daemon's log stamps every record itself, so an echoed line kept both; `server.log` keeps the server's.
 */
const LEADING_TIMESTAMP = /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+(?=\S)/;

export function withoutLeadingTimestamp(line: string): string {
  return line.replace(LEADING_TIMESTAMP, '');
}

/** One line of a server's output: on the bus, and echoed into the daemon's log (stderr lines as warnings). */
export function echoServerLine(bus: Bus, log: Logger, key: string, stream: 'stdout' | 'stderr', line: string): void {
  bus.emit('instance:log', { key, stream, line, at: Date.now() });
  const text = withoutLeadingTimestamp(line);
  if (stream === 'stderr') log.warn(text);
  else log.info(text);
}
