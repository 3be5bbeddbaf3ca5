/** readProcessStats (src/metrics/proc-stats.ts) against what Node reports about its own process. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readProcessStats } from '../../src/metrics/proc-stats.ts';

const proc = suite('metrics :: /proc stats');

proc('own process: RSS and CPU seconds agree with process.memoryUsage() and process.cpuUsage()', async () => {
  const t = Date.now();
  while (Date.now() - t < 200); // some CPU time to measure
  const before = process.cpuUsage();
  const stats = await readProcessStats(process.pid);
  const after = process.cpuUsage();
  assert.ok(stats, 'stats for a live process');
  const rss = process.memoryUsage().rss;
  assert.ok(Math.abs(stats!.rssBytes - rss) / rss < 0.25, `rss ${stats!.rssBytes} vs ${rss}`);
  const cpu = (s: NodeJS.CpuUsage) => (s.user + s.system) / 1e6;
  // /proc counts in 10 ms ticks: allow a couple of ticks either way.
  assert.ok(
    stats!.cpuSeconds >= cpu(before) - 0.05 && stats!.cpuSeconds <= cpu(after) + 0.05,
    `cpu ${stats!.cpuSeconds} vs ${cpu(before)}..${cpu(after)}`,
  );
});

proc('a pid that does not exist, or is not a pid → null', async () => {
  for (const pid of [0, -1, 1.5, Number.NaN, 2 ** 31 - 1]) assert.is(await readProcessStats(pid), null, String(pid));
});

proc.run();
