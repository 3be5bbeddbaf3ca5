import type { Bus } from '../bus.ts';
import type { Logger } from '../log.ts';

/**
 * A timestamp a server put at the start of its own line (`2026-11-28T00:07:53.531Z`, `[2026-11-28 00:07:53,531]`).
 * The daemon's log stamps every record itself, so an echoed line kept both; `server.log` keeps the server's.
 */
const LEADING_TIMESTAMP = /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+(?=\S)/;

export function withoutLeadingTimestamp(line: string): string {
  return line.replace(LEADING_TIMESTAMP, '');
}

/**
 * One line of a server's output: on the bus for the dashboard and `logs -f`, and echoed into the daemon's log under
 * `<key>:server` (stderr lines stand out as warnings).
 */
export function echoServerLine(bus: Bus, log: Logger, key: string, stream: 'stdout' | 'stderr', line: string): void {
  bus.emit('instance:log', { key, stream, line, at: Date.now() });
  const text = withoutLeadingTimestamp(line);
  if (stream === 'stderr') log.warn(text);
  else log.info(text);
}
