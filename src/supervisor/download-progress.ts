import type { BusEvents } from '../bus.ts';
import type { DownloadProgress } from './status.ts';

type UpdateEvent = BusEvents['instance:update'];

/**
 * A running update's download as the status shows it: bytes, total, the average rate since the download
 * began and, with a total, the time left. Fed every `instance:update` of its instance; a download starting (no bytes
 * yet) begins afresh, and anything but `download` ends it.
 */
export function createDownloadProgress() {
  let current: { startedAt: number; bytes: number; total: number | null; at: number } | null = null;
  return {
    seen(e: UpdateEvent): void {
      if (e.phase !== 'download') {
        current = null;
        return;
      }
      const bytes = e.bytes ?? 0;
      if (current === null || bytes === 0 || bytes < current.bytes)
        current = { startedAt: e.at, bytes, total: null, at: e.at };
      current = { ...current, bytes, total: e.total ?? null, at: e.at };
    },

    /** The check or update it belonged to ended (a check stages builds and reports no phase of its own at its end). */
    end(): void {
      current = null;
    },

    status(): DownloadProgress | null {
      if (current === null) return null;
      const { startedAt, bytes, total, at } = current;
      const seconds = (at - startedAt) / 1000;
      // Under half a second of data says little about the rate.
      const rate = seconds >= 0.5 ? Math.round(bytes / seconds) : null;
      const eta = rate && total !== null && total >= bytes ? Math.ceil((total - bytes) / rate) : null;
      return { bytes, total, bytesPerSecond: rate, etaSeconds: eta, since: new Date(startedAt).toISOString() };
    },
  };
}
