import { monotonicMs } from '../clock.ts';

/** The bucket past `maxBuckets` (1024), so varying keys cannot grow the table: only ever summarised. */
export const OTHER_SOURCES = 'other sources';

/** What a window held back: `count` events of `bucket` over `seconds`, the last of them noted as `last`. */
export type WindowSummary = { bucket: string; count: number; seconds: number; last: string | undefined };

/**
 * About one line per bucket per window, for what others can make us log without limit (refused requests by source,
 * rejected check-ins by instance): the first event of a bucket is written in full (`admit` says true), the rest are
 * counted and summarised once per window. A bucket quiet for a whole window is forgotten. `everyMs` is read whenever
 * the timer starts (a reload applies from the next quiet spell); 0 or less: no window. `now` is monotonic, so a step
 * of the wall clock cannot stretch a window.
 */
export function createLogWindow(opts: {
  everyMs: () => number;
  onSummary: (summary: WindowSummary) => void;
  maxBuckets?: number;
  now?: () => number;
}) {
  const buckets = new Map<string, { count: number; since: number; last: string | undefined }>();
  const max = opts.maxBuckets ?? 1024;
  const now = opts.now ?? monotonicMs;
  let timer: NodeJS.Timeout | undefined;

  const logWindow = {
    /** Counts an event of `bucket` (`last` notes what it said); true when it is to be written in full. */
    admit(bucket: string, last?: string): boolean {
      if (opts.everyMs() <= 0) return true;
      const key = buckets.has(bucket) || buckets.size < max ? bucket : OTHER_SOURCES;
      const entry = buckets.get(key);
      if (entry) {
        entry.count += 1;
        entry.last = last;
        return false;
      }
      // The shared bucket is only ever summarised: its first event says nothing about the next bucket's.
      const shared = key === OTHER_SOURCES;
      buckets.set(key, { count: shared ? 1 : 0, since: now(), last: shared ? last : undefined });
      if (!timer) {
        timer = setInterval(logWindow.flush, Math.max(10, opts.everyMs()));
        timer.unref();
      }
      return !shared;
    },

    /** Writes the summaries due now and forgets quiet buckets. */
    flush(): void {
      const at = now();
      for (const [bucket, entry] of buckets) {
        if (entry.count === 0) {
          buckets.delete(bucket);
          continue;
        }
        const { count, last } = entry;
        const seconds = Math.max(1, Math.round((at - entry.since) / 1000));
        buckets.set(bucket, { count: 0, since: at, last: undefined });
        try {
          opts.onSummary({ bucket, count, seconds, last });
        } catch {
          // A reporter's failure must not stop the others' summaries.
        }
      }
      if (buckets.size === 0) logWindow.stop();
    },

    /** Writes what is still counted and stops the timer. */
    close(): void {
      logWindow.flush();
      logWindow.stop();
    },

    /** Stops the timer (the table is kept; a later event starts it again). */
    stop(): void {
      clearInterval(timer);
      timer = undefined;
    },
  };
  return logWindow;
}
