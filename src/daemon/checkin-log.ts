import type { Bus } from '../bus.ts';
import type { Logger } from '../log.ts';

/**
 * Logs rejected check-ins with their reason, at most once per `everyMs` per instance: a misconfigured server
 * pings every 15 s forever, and the spec's symptom (a restart every TimeoutSeconds) needs its cause visible.
 */
export function logRejectedCheckins(bus: Bus, log: Logger, everyMs: number): () => void {
  const last = new Map<string, number>();
  const handler = (e: { key: string; reason: string; remote: string | undefined; at: number }) => {
    const prev = last.get(e.key);
    if (prev !== undefined && e.at - prev < everyMs) return;
    last.set(e.key, e.at);
    log.warn(`check-in rejected: ${e.reason}`, { key: e.key, remote: e.remote ?? '' });
  };
  bus.on('checkin:rejected', handler);
  return () => bus.off('checkin:rejected', handler);
}
