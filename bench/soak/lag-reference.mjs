/**
 * The machine's own event-loop lag, side by side with the daemon's: an idle Node process measuring exactly as
 * the daemon's /metrics does (monitorEventLoopDelay, 10 ms resolution, the 10 ms subtracted). On each "scrape"
 * line on stdin it prints the p99 (ms) since the previous one and resets, so both windows are the same. A
 * window where even this idle process lags is one where the machine, not the daemon, was starved.
 * Exits when stdin closes (the soak ended, or died).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
let buffered = '';
process.stdin.on('data', (d) => {
  buffered += d.toString('utf8');
  while (buffered.includes('\n')) {
    buffered = buffered.slice(buffered.indexOf('\n') + 1);
    const p99 = Math.max(0, loop.percentile(99) / 1e6 - 10);
    loop.reset();
    process.stdout.write(`${p99.toFixed(3)}\n`);
  }
});
process.stdin.on('end', () => process.exit(0));
