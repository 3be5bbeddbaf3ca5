/**
 * Prometheus metrics: counters fed by the bus, gauges read from every instance's status at scrape time. The bus is
 * tallied from the start (tally.ts); prom-client, a private Registry (nothing global leaks between daemons or
 * tests) and the chart's list of states are loaded at the first scrape, which keeps them out of the daemon's
 * start-up and idle memory.
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { type AlertKind, type Bus, type BusEvents, type DiskReading, type RestartReason, subscribe } from '../bus.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { InstanceStatus } from '../supervisor/status.ts';
import { type BackupFamilies, tallyBackups } from './backups.ts';
import type { ConnectionFamilies, ConnectionFigures } from './connection-metrics.ts';
import type { DiskFamilies } from './disk-gauges.ts';
import type { Families } from './families.ts';
import type { ResilienceFamilies } from './resilience.ts';
import { tallyResilience } from './resilience-tally.ts';
import { Tally } from './tally.ts';
import { tallyUpdateChecks } from './update-check-tally.ts';
import type { UpdateCheckFamilies } from './update-checks.ts';

export interface MetricsCollector {
  /** The exposition text; a server's CPU, memory and players are its status's last sample. */
  metrics(): Promise<string>;
  readonly contentType: string;
  /** Stops listening on the bus and the event-loop monitor. */
  stop(): void;
}

export interface MetricsOptions {
  bus: Bus;
  registry: InstanceRegistry;
  version?: string;
  /** The HTTP connection guard's figures, read at each scrape (absent: no connection metrics). */
  connections?: () => ConnectionFigures;
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
/** prom-client's Registry.PROMETHEUS_CONTENT_TYPE, known before prom-client is loaded. */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function createMetricsCollector(opts: MetricsOptions): MetricsCollector {
  const { bus, registry } = opts;
  let loaded: Promise<{
    reg: Registry;
    families: Families;
    disk: DiskFamilies;
    states: string[];
    resilience: ResilienceFamilies;
    checks: UpdateCheckFamilies;
    backupFamilies: BackupFamilies;
    connections: ConnectionFamilies | null;
  }> | null = null;
  const load = async () => {
    // prom-client is CommonJS: Node gives its exports as named ones too, but the bundle in dist/app/ only as the
    // default export, which both have (the compiled daemon answered every scrape with 500 when this took `Registry`
    // by name).
    const [
      { default: promClient },
      { createFamilies },
      { statePaths },
      diskGauges,
      { createResilienceFamilies },
      { createConnectionFamilies },
      { createUpdateCheckFamilies },
    ] = await Promise.all([
      import('prom-client'),
      import('./families.ts'),
      import('../chart/graph.ts'),
      import('./disk-gauges.ts'),
      import('./resilience.ts'),
      import('./connection-metrics.ts'),
      import('./update-checks.ts'),
    ]);
    const { Registry } = promClient;
    const reg = new Registry();
    return {
      reg,
      families: createFamilies(reg),
      disk: diskGauges.createDiskFamilies(reg),
      states: statePaths(),
      resilience: createResilienceFamilies(reg),
      checks: createUpdateCheckFamilies(reg),
      backupFamilies: await (await import('./backups.ts')).createBackupFamilies(reg),
      connections: opts.connections ? createConnectionFamilies(reg) : null,
    };
  };

  // The event-loop monitor wakes the loop every resolutionMs, about 1 % of a core on a daemon with nothing else to
  // do. It starts at the first scrape, so a daemon nobody scrapes never pays for it; that scrape has no window
  // behind it and reports a lag of 0.
  const resolutionMs = 10;
  let loop: IntervalHistogram | null = null;
  let stopped = false;

  /**
   * Bytes of the last download, by instance: `done` reports the duration, progress events the size. Kept across a
   * `check`: a provider may download (stage) the build during an earlier check and only swap it in at `done`.
   */
  const downloaded = new Map<string, number>();
  const restarts = new Tally<'instance' | 'reason'>();
  const alerts = new Tally<'instance' | 'kind'>();
  const updates = new Tally<'instance' | 'result'>();
  const stragglers = new Tally<'instance' | 'when'>();
  /** The last installed update of each instance: how long it took (s) and what it downloaded (bytes). */
  const lastUpdate = new Map<string, { seconds?: number; bytes?: number }>();
  const onUpdate = (e: BusEvents['instance:update']) => {
    if (e.phase === 'failed' || e.phase === 'none') downloaded.delete(e.key);
    if ((e.phase === 'download' || e.phase === 'verify') && e.bytes !== undefined) downloaded.set(e.key, e.bytes);
    if (e.phase === 'failed') updates.inc({ instance: e.key, result: 'failed' });
    if (e.phase === 'done') {
      updates.inc({ instance: e.key, result: 'done' });
      const last = { ...lastUpdate.get(e.key) };
      if (e.durationMs !== undefined) last.seconds = e.durationMs / 1000;
      const bytes = downloaded.get(e.key);
      if (bytes !== undefined) last.bytes = bytes;
      lastUpdate.set(e.key, last);
      downloaded.delete(e.key);
    }
  };
  /** The disk watcher's last readings, shown by the disk gauges (disk-gauges.ts). */
  let disks: readonly DiskReading[] = [];
  const resilience = tallyResilience(bus);
  const updateChecks = tallyUpdateChecks(bus);
  const backups = tallyBackups(bus);
  const unsubscribe = subscribe(bus, {
    'disk:checked': (e) => (disks = e.filesystems),
    'instance:restart': (e) => restarts.inc({ instance: e.key, reason: e.reason }),
    'instance:alert': (e) => alerts.inc({ instance: e.key, kind: e.kind }),
    'instance:update': onUpdate,
    'instance:stragglers': (e) => stragglers.inc({ instance: e.key, when: e.when }, e.pids.length),
  });

  /** prom-client exposes a labelled counter only once touched: zero for every known instance, so rate() starts at 0. */
  const touchCounters = (f: Families, key: string) => {
    const { restarts, alerts, updates } = f;
    for (const reason of Object.keys(REASONS)) restarts.inc({ instance: key, reason }, 0);
    for (const kind of Object.keys(KINDS)) alerts.inc({ instance: key, kind }, 0);
    for (const result of UPDATE_RESULTS) updates.inc({ instance: key, result }, 0);
    for (const when of ['exit', 'relaunch']) f.stragglers.inc({ instance: key, when }, 0);
  };

  const setInstance = (f: Families, states: string[], s: InstanceStatus, now: number) => {
    const { info, state, sinceCheckin, uptime, startupFailures, rss, cpu, players } = f;
    const { maintenancePending, maintenanceNext } = f;
    const instance = s.key;
    info.set({ instance, name: s.name, revision: s.revision ?? '' }, 1);
    for (const path of states) state.set({ instance, state: path }, path === s.state ? 1 : 0);
    if (!states.includes(s.state)) state.set({ instance, state: s.state }, 1);
    if (s.lastCheckinAt) sinceCheckin.set({ instance }, Math.max(0, (now - Date.parse(s.lastCheckinAt)) / 1000));
    if (s.uptimeSeconds !== null) uptime.set({ instance }, s.uptimeSeconds);
    startupFailures.set({ instance }, s.startupFailures);
    const m = s.maintenance;
    if (m) {
      maintenancePending.set({ instance }, m.pending === null ? 0 : 1);
      const at = (iso: string | null, what: string) => {
        if (iso !== null) maintenanceNext.set({ instance, what }, Date.parse(iso) / 1000);
      };
      at(m.nextRestart, 'restart');
      at(m.nextUpdateCheck, 'update-check');
    }
    touchCounters(f, instance);
    const r = s.resources;
    if (r) {
      rss.set({ instance }, r.rssBytes);
      // A counter tracking a total kept elsewhere: reset each scrape (below) and added, as counters cannot be set.
      cpu.inc({ instance }, r.cpuSeconds);
    }
    if (typeof s.players === 'number') players.set({ instance }, s.players);
    for (const h of s.hub?.hubs ?? []) {
      if (h.listed !== null) f.hubListed.set({ instance, hub: h.hub }, h.listed ? 1 : 0);
      if (h.missingSince !== null)
        f.hubMissing.set({ instance, hub: h.hub }, Math.max(0, (now - Date.parse(h.missingSince)) / 1000));
    }
  };

  const refresh = async (f: Families, states: string[]) => {
    // Synchronous: a concurrent scrape sees one whole snapshot or the other.
    const statuses = registry.list().map((i) => i.status());
    const now = Date.now();
    const { info, state, sinceCheckin, uptime, startupFailures, rss, cpu, updateDuration, updateBytes } = f;
    const maintenance = [f.maintenancePending, f.maintenanceNext];
    for (const g of [
      info,
      state,
      sinceCheckin,
      uptime,
      startupFailures,
      rss,
      f.players,
      f.hubListed,
      f.hubMissing,
      updateDuration,
      updateBytes,
      ...maintenance,
    ])
      g.reset();
    // Counters cannot be set: each scrape starts them over and adds the totals kept outside.
    for (const c of [cpu, f.restarts, f.alerts, f.updates, f.stragglers]) c.reset();
    for (const { labels, n } of stragglers.entries()) f.stragglers.inc(labels, n);
    for (const { labels, n } of restarts.entries()) f.restarts.inc(labels, n);
    for (const { labels, n } of alerts.entries()) f.alerts.inc(labels, n);
    for (const { labels, n } of updates.entries()) f.updates.inc(labels, n);
    for (const [instance, last] of lastUpdate) {
      if (last.seconds !== undefined) updateDuration.set({ instance }, last.seconds);
      if (last.bytes !== undefined) updateBytes.set({ instance }, last.bytes);
    }
    for (const s of statuses) setInstance(f, states, s, now);
    // The histogram records whole timer intervals; the lag is what exceeds the sampling period.
    const ns = (v: number | undefined) =>
      v !== undefined && Number.isFinite(v) ? Math.max(0, v / 1e9 - resolutionMs / 1000) : 0;
    f.lagMean.set(ns(loop?.mean));
    f.lagP99.set(ns(loop?.percentile(99)));
    f.lagMax.set(ns(loop?.max));
    loop?.reset();
    if (!loop && !stopped) {
      loop = monitorEventLoopDelay({ resolution: resolutionMs });
      loop.enable();
    }
    f.build.reset();
    f.build.set({ version: opts.version ?? 'unknown' }, 1);
  };

  return {
    contentType: CONTENT_TYPE,
    async metrics() {
      // A failure is not kept: the next scrape tries again.
      loaded ??= load().catch((err: unknown) => {
        loaded = null;
        throw err;
      });
      const { reg, families, disk, states, resilience: rf, checks, backupFamilies, connections } = await loaded;
      await refresh(families, states);
      const { setDiskFamilies } = await import('./disk-gauges.ts');
      setDiskFamilies(disk, disks);
      const keys = registry.list().map((i) => i.key);
      resilience.refresh(rf, keys);
      updateChecks.refresh(checks, keys);
      backups.refresh(backupFamilies, keys);
      if (connections && opts.connections) {
        const { setConnectionFamilies } = await import('./connection-metrics.ts');
        setConnectionFamilies(connections, opts.connections());
      }
      return reg.metrics();
    },
    stop() {
      stopped = true;
      unsubscribe();
      resilience.stop();
      updateChecks.stop();
      backups.stop();
      loop?.disable();
    },
  };
}
