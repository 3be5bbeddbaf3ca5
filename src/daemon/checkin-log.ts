import type { Bus } from '../bus.ts';
import type { Logger } from '../log.ts';

/** Where check-ins for keys that are not configured are counted: the client chooses those, without limit. */
const UNKNOWN = Symbol('unknown key');

/**
 * Logs rejected check-ins with their reason, at most once per `everyMs` per instance: a misconfigured server
 * pings every 15 s forever, and the spec's symptom (a restart every TimeoutSeconds) needs its cause visible.
 * Keys that `known` does not recognise share one window, so a client inventing keys cannot flood the log or
 * grow the table.
 */
export function logRejectedCheckins(
  bus: Bus,
  log: Logger,
  everyMs: number,
  known: (key: string) => boolean,
): () => void {
  const last = new Map<string | typeof UNKNOWN, number>();
  const handler = (e: { key: string; reason: string; remote: string | undefined; at: number }) => {
    const bucket = known(e.key) ? e.key : UNKNOWN;
    const prev = last.get(bucket);
    if (prev !== undefined && e.at - prev < everyMs) return;
    last.set(bucket, e.at);
    log.warn(`check-in rejected: ${e.reason}`, { key: e.key, remote: e.remote ?? '' });
  };
  bus.on('checkin:rejected', handler);
  return () => bus.off('checkin:rejected', handler);
}
