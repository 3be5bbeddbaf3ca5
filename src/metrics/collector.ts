/**
 * Prometheus metrics (issue 6 item 4): counters fed by the bus, gauges read from every instance's status at
 * scrape time. A private prom-client Registry, so nothing global leaks between daemons or tests.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import type { AlertKind, Bus, BusEvents, RestartReason } from '../bus.ts';
import { statePaths } from '../chart/index.ts';
import type { InstanceRegistry, InstanceStatus } from '../supervisor/contract.ts';
import { createFamilies } from './families.ts';
import { type ProcessStats, readProcessStats } from './proc-stats.ts';

export interface MetricsCollector {
  /** The exposition text; reads /proc for each running server. */
  metrics(): Promise<string>;
  readonly contentType: string;
  /** Stops listening on the bus and the event-loop monitor. */
  stop(): void;
}

export interface MetricsOptions {
  bus: Bus;
  registry: InstanceRegistry;
  version?: string;
  /** Reads a server's RSS and CPU time; /proc by default. */
  readStats?: (pid: number) => Promise<ProcessStats | null>;
}

// Records, so adding a reason or kind to src/bus.ts without listing it here fails to type-check.
const REASONS: Record<RestartReason, true> = {
  crash: true,
  hang: true,
  request: true,
  update: true,
  'startup-failure': true,
  exit: true,
};
const KINDS: Record<AlertKind, true> = {
  crash: true,
  'crash-loop': true,
  hang: true,
  'hang-loop': true,
  failing: true,
  stopped: true,
};
const UPDATE_RESULTS = ['done', 'failed'] as const;

export function createMetricsCollector(opts: MetricsOptions): MetricsCollector {
  const { bus, registry } = opts;
  const readStats = opts.readStats ?? readProcessStats;
  const reg = new Registry();
  const states = statePaths();
  const families = createFamilies(reg);
  const { info, state, sinceCheckin, uptime, startupFailures, restarts, alerts, updates } = families;
  const { updateDuration, updateBytes, rss, cpu, lagMean, lagP99, lagMax, build } = families;

  const resolutionMs = 10;
  const loop = monitorEventLoopDelay({ resolution: resolutionMs });
  loop.enable();

  /**
   * Bytes of the last download, by instance: `done` reports the duration, progress events the size. Kept across a
   * `check`: a provider may download (stage) the build during an earlier check and only swap it in at `done`.
   */
  const downloaded = new Map<string, number>();
  const onRestart = (e: BusEvents['instance:restart']) => restarts.inc({ instance: e.key, reason: e.reason });
  const onAlert = (e: BusEvents['instance:alert']) => alerts.inc({ instance: e.key, kind: e.kind });
  const onUpdate = (e: BusEvents['instance:update']) => {
    if (e.phase === 'failed' || e.phase === 'none') downloaded.delete(e.key);
    if ((e.phase === 'download' || e.phase === 'verify') && e.bytes !== undefined) downloaded.set(e.key, e.bytes);
    if (e.phase === 'failed') updates.inc({ instance: e.key, result: 'failed' });
    if (e.phase === 'done') {
      updates.inc({ instance: e.key, result: 'done' });
      if (e.durationMs !== undefined) updateDuration.set({ instance: e.key }, e.durationMs / 1000);
      const bytes = downloaded.get(e.key);
      if (bytes !== undefined) updateBytes.set({ instance: e.key }, bytes);
      downloaded.delete(e.key);
    }
  };
  bus.on('instance:restart', onRestart);
  bus.on('instance:alert', onAlert);
  bus.on('instance:update', onUpdate);

  /** prom-client exposes a labelled counter only once touched: zero for every known instance, so rate() starts at 0. */
  const touchCounters = (key: string) => {
    for (const reason of Object.keys(REASONS)) restarts.inc({ instance: key, reason }, 0);
    for (const kind of Object.keys(KINDS)) alerts.inc({ instance: key, kind }, 0);
    for (const result of UPDATE_RESULTS) updates.inc({ instance: key, result }, 0);
  };

  const setInstance = (s: InstanceStatus, stats: ProcessStats | null, now: number) => {
    const instance = s.key;
    info.set({ instance, name: s.name, revision: s.revision ?? '' }, 1);
    for (const path of states) state.set({ instance, state: path }, path === s.state ? 1 : 0);
    if (!states.includes(s.state)) state.set({ instance, state: s.state }, 1);
    if (s.lastCheckinAt) sinceCheckin.set({ instance }, Math.max(0, (now - Date.parse(s.lastCheckinAt)) / 1000));
    if (s.uptimeSeconds !== null) uptime.set({ instance }, s.uptimeSeconds);
    startupFailures.set({ instance }, s.startupFailures);
    touchCounters(instance);
    if (stats) {
      rss.set({ instance }, stats.rssBytes);
      // A counter tracking a total kept elsewhere: reset each scrape (below) and added, as counters cannot be set.
      cpu.inc({ instance }, stats.cpuSeconds);
    }
  };

  const refresh = async () => {
    const statuses = registry.list().map((i) => i.status());
    const stats = await Promise.all(statuses.map((s) => (s.pid === null ? null : readStats(s.pid))));
    // Synchronous from here: a concurrent scrape sees one whole snapshot or the other.
    const now = Date.now();
    for (const g of [info, state, sinceCheckin, uptime, startupFailures, rss]) g.reset();
    cpu.reset();
    for (const [i, s] of statuses.entries()) setInstance(s, stats[i] ?? null, now);
    // The histogram records whole timer intervals; the lag is what exceeds the sampling period.
    const ns = (v: number) => (Number.isFinite(v) ? Math.max(0, v / 1e9 - resolutionMs / 1000) : 0);
    lagMean.set(ns(loop.mean));
    lagP99.set(ns(loop.percentile(99)));
    lagMax.set(ns(loop.max));
    loop.reset();
    build.reset();
    build.set({ version: opts.version ?? 'unknown' }, 1);
  };

  return {
    contentType: reg.contentType,
    async metrics() {
      await refresh();
      return reg.metrics();
    },
    stop() {
      bus.off('instance:restart', onRestart);
      bus.off('instance:alert', onAlert);
      bus.off('instance:update', onUpdate);
      loop.disable();
    },
  };
}
