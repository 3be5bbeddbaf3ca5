/**
 * Event-loop lag monitor, loaded into a supervisor under test with `node --import <this file> ...` (the daemon does
 * not expose its loop delay, and the bench must not change src/). Every second it appends one JSON line to
 * $BENCH_LAG_FILE: { at, p50, p99, max, n, cdf } in milliseconds for that second, then starts a fresh histogram;
 * cdf is the histogram's percentile points ([percent, ms], finer towards the tail), so a reader can merge seconds
 * into the percentiles of any window.
 * The histogram records the interval between wake-ups of a 10 ms timer, so 10 ms is subtracted: what remains is
 * how late the loop ran it (an idle process reads about 0).
 * Its timer is unref'd, so it never keeps a process alive.
 */
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_LAG_FILE;
if (file) {
  const RESOLUTION_MS = 10;
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const ms = (ns) => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);
  setInterval(() => {
    const cdf = [...h.percentiles].map(([pct, ns]) => [pct, ms(ns)]);
    const line = {
      at: performance.timeOrigin + performance.now(),
      p50: ms(h.percentile(50)),
      p99: ms(h.percentile(99)),
      max: ms(h.max),
      n: h.count,
      cdf,
    };
    h.reset();
    try {
      appendFileSync(file, JSON.stringify(line) + '\n');
    } catch {
      // The bench removed its folder: nothing left to report to.
    }
  }, 1000).unref();
}
