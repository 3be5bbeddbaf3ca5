import type { BusEvents } from '../bus.ts';
import { monotonicMs } from '../clock.ts';
import type { DownloadProgress } from './status.ts';

type UpdateEvent = BusEvents['instance:update'];

/**
 * A running update's download as the status shows it: bytes, total, the average rate since the download
 * began and, with a total, the time left. Fed every `instance:update` of its instance; a download starting (no bytes
 * yet) begins afresh, and anything but `download` ends it. The rate is measured on `now` (the monotonic clock), the
 * start shown (`since`) is the event's wall time.
 */
export function createDownloadProgress(now: () => number = monotonicMs) {
  let current: { since: number; from: number; bytes: number; total: number | null; last: number } | null = null;
  return {
    seen(e: UpdateEvent): void {
      if (e.phase !== 'download') {
        current = null;
        return;
      }
      const bytes = e.bytes ?? 0;
      const t = now();
      if (current === null || bytes === 0 || bytes < current.bytes)
        current = { since: e.at, from: t, bytes, total: null, last: t };
      current = { ...current, bytes, total: e.total ?? null, last: t };
    },

    /** The check or update it belonged to ended (a check stages builds and reports no phase of its own at its end). */
    end(): void {
      current = null;
    },

    status(): DownloadProgress | null {
      if (current === null) return null;
      const { since, from, bytes, total, last } = current;
      const seconds = (last - from) / 1000;
      // Under half a second of data says little about the rate.
      const rate = seconds >= 0.5 ? Math.round(bytes / seconds) : null;
      const eta = rate && total !== null && total >= bytes ? Math.ceil((total - bytes) / rate) : null;
      return { bytes, total, bytesPerSecond: rate, etaSeconds: eta, since: new Date(since).toISOString() };
    },
  };
}
