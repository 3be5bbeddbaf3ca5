import type { Bus, BusEvents } from '../bus.ts';
import { createLogWindow } from '../http/log-window.ts';
import { refusedSummary, sourceOf } from '../http/refused.ts';
import type { Logger } from '../log.ts';

/** The bucket of check-ins for keys that are not configured: the client chooses those, without limit. */
const UNKNOWN_KEYS = '(keys not configured)';

/**
 * Logs rejected check-ins with their reason, at most one line per `everyMs()` per instance (a window of 0 logs every
 * one): a misconfigured server pings every 15 s forever, and the spec's symptom (a restart every TimeoutSeconds)
 * needs its cause visible. The rest of a window is one line with their count and the last reason. Keys that `known`
 * does not recognise share one bucket, so a client inventing keys cannot flood the log or grow the table.
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

/**
 * Logs requests refused before their credentials were accepted (`daemon:request-refused`) in the same way, by source: the
 * first in full, then one summary line per `everyMs()` while they go on (`1,234 refused requests from 127.0.0.1 in
 * the last 60 s`). Whatever a stranger sends, this writes at most about one line per source per interval, for at
 * most `MAX_BUCKETS` sources plus one for all others.
 */
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
