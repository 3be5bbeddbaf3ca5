import type { Bus, BusEvents } from '../bus.ts';
import { RefusalWindow } from '../http/refusal-window.ts';
import type { Logger } from '../log.ts';

/**
 * Logs requests refused before their credentials were accepted (`request:refused`) like rejected check-ins: the
 * first from a source in full, at WARN, then one summary line per `everyMs()` while they go on
 * (`1,234 refused requests from 127.0.0.1 in the last 60 s`). Whatever a stranger sends, this writes at most about
 * one line per source per interval, for at most `MAX_SOURCES` sources plus one for all others. Returns the
 * function that stops it (and writes what is still counted).
 */
export function logRefusedRequests(bus: Bus, log: Logger, everyMs: () => number): () => void {
  const window = new RefusalWindow({
    everyMs,
    onSummary: (s) => log.warn(s.text, { remote: s.source, refused: s.count }),
  });
  const handler = (e: BusEvents['request:refused']) => {
    if (!window.admit(e.remote)) return;
    log.warn(
      `${e.route} ${e.action} refused: ${e.reason} (further refusals from this source are summarised every ${everyMs() / 1000} s)`,
      { key: e.key ?? '', status: e.status, remote: e.remote ?? '' },
    );
  };
  bus.on('request:refused', handler);
  return () => {
    bus.off('request:refused', handler);
    window.flush();
    window.stop();
  };
}
