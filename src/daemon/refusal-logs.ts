import type { Bus, BusEvents } from '../bus.ts';
import { createLogWindow } from '../http/log-window.ts';
import { refusedSummary, sourceOf } from '../http/refused.ts';
import type { Logger } from '../log.ts';

/** The bucket of check-ins for keys that are not configured: the client chooses those, without limit. */
const UNKNOWN_KEYS = '(keys not configured)';

/**
 * Logs rejected check-ins, at most one line per `everyMs()` per instance, then their count: a misconfigured server
 * pings for ever. Unknown keys share one bucket, so invented keys cannot flood the log or grow the table.
 */
export function logRejectedCheckins(
  bus: Bus,
  log: Logger,
  everyMs: () => number,
  known: (key: string) => boolean,
): () => void {
  const window = createLogWindow({
    everyMs,
    onSummary: (s) =>
      log.warn(`check-in rejected: ${s.last} (${s.count.toLocaleString('en-US')} more in the last ${s.seconds} s)`, {
        key: s.bucket,
        rejected: s.count,
      }),
  });
  const handler = (e: BusEvents['instance:checkin-rejected']) => {
    if (!window.admit(known(e.key) ? e.key : UNKNOWN_KEYS, e.reason)) return;
    log.warn(`check-in rejected: ${e.reason}`, { key: e.key, remote: e.remote ?? '' });
  };
  bus.on('instance:checkin-rejected', handler);
  return () => {
    bus.off('instance:checkin-rejected', handler);
    window.close();
  };
}

/** Logs requests refused before their credentials were accepted the same way, by source. */
export function logRefusedRequests(bus: Bus, log: Logger, everyMs: () => number): () => void {
  const window = createLogWindow({
    everyMs,
    onSummary: (s) => log.warn(refusedSummary(s.bucket, s.count, s.seconds), { remote: s.bucket, refused: s.count }),
  });
  const handler = (e: BusEvents['daemon:request-refused']) => {
    if (!window.admit(sourceOf(e.remote))) return;
    log.warn(
      `${e.route} ${e.action} refused: ${e.reason} (further refusals from this source are summarised every ${everyMs() / 1000} s)`,
      { key: e.key ?? '', status: e.status, remote: e.remote ?? '' },
    );
  };
  bus.on('daemon:request-refused', handler);
  return () => {
    bus.off('daemon:request-refused', handler);
    window.close();
  };
}
