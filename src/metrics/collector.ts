/**
 * Prometheus metrics in a private Registry (nothing global leaks between daemons or tests): the bus counted as it
 * happens, gauges read from every instance's status at scrape time.
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { isPermission, PERMISSIONS } from '../auth/permissions.ts';
import {
  type AlertKind,
  type Bus,
  type BusEvents,
  type DiskReading,
  LOGIN_RESULTS,
  REFUSED_ROUTES,
  type RestartReason,
  subscribe,
} from '../bus.ts';
import { statePaths } from '../chart/graph.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { InstanceStatus } from '../supervisor/status.ts';
import { createFamilies } from './families.ts';

/** The HTTP connection guard's figures (src/http/connection-guard.ts), as the daemon hands them to the metrics. */
export interface ConnectionFigures {
  open: number;
  refused: Record<'total' | 'source', number>;
  evicted: Record<'total' | 'source', number>;
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
const FAULT_KINDS: Record<BusEvents['daemon:fault']['kind'], true> = {
  'uncaught-exception': true,
  'unhandled-rejection': true,
};
/** HTTP statuses a refusal can have; anything else is counted as `other`, so the label set stays fixed. */
const REFUSED_STATUSES = new Set(['400', '401', '403', '404', '503']);
/** Gauges of an instance's last success, dropped with the instance: a removed one's would alert for ever. */
const LAST_SUCCESS = ['updateCheckLastSuccess', 'backupLastSuccess', 'backupLastSize'] as const;

export function createMetricsCollector(opts: {
  bus: Bus;
  registry: InstanceRegistry;
  version?: string;
  /** The HTTP connection guard's figures, read at each scrape (absent: no connection metrics). */
  connections?: () => ConnectionFigures;
}) {
  const { bus, registry } = opts;
  const reg = new Registry();
  const f = createFamilies(reg);
  const connections = opts.connections ? f.connections() : null;
  /** The chart's state paths, for the one-hot state gauge: worked out at the first scrape. */
  let states: string[] | null = null;

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
  const onUpdate = (e: BusEvents['instance:update']) => {
    if (e.phase === 'failed' || e.phase === 'none') downloaded.delete(e.key);
    if ((e.phase === 'download' || e.phase === 'verify') && e.bytes !== undefined) downloaded.set(e.key, e.bytes);
    if (e.phase === 'failed') f.updates.inc({ instance: e.key, result: 'failed' });
    if (e.phase === 'done') {
      f.updates.inc({ instance: e.key, result: 'done' });
      if (e.durationMs !== undefined) f.updateDuration.set({ instance: e.key }, e.durationMs / 1000);
      const bytes = downloaded.get(e.key);
      if (bytes !== undefined) f.updateBytes.set({ instance: e.key }, bytes);
      downloaded.delete(e.key);
    }
  };
  /** The disk watcher's last readings; a file system that could not be read has no series. */
  const setDisks = (readings: readonly DiskReading[]) => {
    for (const g of [f.diskFree, f.diskTotal, f.diskThreshold, f.diskLow]) g.reset();
    for (const r of readings) {
      if (r.freeBytes === null || r.totalBytes === null) continue;
      const labels = { holds: r.holds, mount: r.mount };
      f.diskFree.set(labels, r.freeBytes);
      f.diskTotal.set(labels, r.totalBytes);
      if (r.thresholdBytes !== null) f.diskThreshold.set(labels, r.thresholdBytes);
      f.diskLow.set(labels, r.low ? 1 : 0);
    }
  };
  /** When the last snapshot that worked was taken, by instance: one found on disk may be older than one taken. */
  const lastBackupAt = new Map<string, number>();
  const backedUp = (key: string, at: number, bytes: number) => {
    lastBackupAt.set(key, at);
    f.backupLastSuccess.set({ instance: key }, at / 1000);
    f.backupLastSize.set({ instance: key }, bytes);
  };
  // Every label value comes from a fixed list or a configured instance key, never from what a client sent.
  const unsubscribe = subscribe(bus, {
    'daemon:disk-checked': (e) => setDisks(e.filesystems),
    'instance:restart': (e) => f.restarts.inc({ instance: e.key, reason: e.reason }),
    'instance:alert': (e) => f.alerts.inc({ instance: e.key, kind: e.kind }),
    'instance:update': onUpdate,
    'instance:stragglers': (e) => f.stragglers.inc({ instance: e.key, when: e.when }, e.pids.length),
    'instance:update-check': (e) => {
      f.updateChecks.inc({ instance: e.key, result: e.ok ? (e.available ? 'available' : 'none') : 'failed' });
      if (e.ok) f.updateCheckLastSuccess.set({ instance: e.key }, e.at / 1000);
    },
    'instance:backup': (e) => {
      f.backups.inc({ instance: e.key, result: e.ok ? 'ok' : 'failed' });
      if (e.ok) backedUp(e.key, e.at, e.archiveBytes ?? 0);
    },
    // The newest snapshot on disk, so a daemon restart does not empty the last success.
    'instance:backup-found': (e) => {
      if ((lastBackupAt.get(e.key) ?? Number.NEGATIVE_INFINITY) < e.at) backedUp(e.key, e.at, e.archiveBytes);
    },
    'instance:log-dropped': (e) => f.logDropped.inc({ instance: e.key }, e.lines),
    'daemon:request-refused': (e) => {
      const status = String(e.status);
      f.refused.inc({ route: e.route, status: REFUSED_STATUSES.has(status) ? status : 'other' });
      // Only a name of the fixed list is a label value.
      if (e.permission !== undefined && isPermission(e.permission)) f.rightsRefused.inc({ permission: e.permission });
    },
    'daemon:fault': (e) => f.faults.inc({ kind: e.kind }),
    'daemon:login': (e) => f.logins.inc({ result: e.result }),
  });
  for (const result of LOGIN_RESULTS) f.logins.inc({ result }, 0);
  for (const permission of PERMISSIONS) f.rightsRefused.inc({ permission }, 0);
  // prom-client exposes a labelled counter only once touched: zero, so rate() starts at 0.
  for (const route of REFUSED_ROUTES) f.refused.inc({ route, status: '401' }, 0);
  for (const kind of Object.keys(FAULT_KINDS)) f.faults.inc({ kind }, 0);
  const touchCounters = (instance: string) => {
    for (const reason of Object.keys(REASONS)) f.restarts.inc({ instance, reason }, 0);
    for (const kind of Object.keys(KINDS)) f.alerts.inc({ instance, kind }, 0);
    for (const result of ['done', 'failed']) f.updates.inc({ instance, result }, 0);
    for (const when of ['exit', 'relaunch']) f.stragglers.inc({ instance, when }, 0);
    for (const result of ['available', 'none', 'failed']) f.updateChecks.inc({ instance, result }, 0);
    for (const result of ['ok', 'failed']) f.backups.inc({ instance, result }, 0);
    f.logDropped.inc({ instance }, 0);
  };

  const setInstance = (states: string[], s: InstanceStatus, now: number) => {
    const instance = s.key;
    f.info.set({ instance, name: s.name, revision: s.revision ?? '' }, 1);
    for (const path of states) f.state.set({ instance, state: path }, path === s.state ? 1 : 0);
    if (!states.includes(s.state)) f.state.set({ instance, state: s.state }, 1);
    if (s.secondsSinceCheckin != null) f.sinceCheckin.set({ instance }, s.secondsSinceCheckin);
    if (s.uptimeSeconds !== null) f.uptime.set({ instance }, s.uptimeSeconds);
    f.startupFailures.set({ instance }, s.startupFailures);
    const m = s.maintenance;
    if (m) f.maintenancePending.set({ instance }, m.pending === null ? 0 : 1);
    for (const [iso, what] of [
      [m?.nextRestart, 'restart'],
      [m?.nextUpdateCheck, 'update-check'],
    ] as const)
      if (iso) f.maintenanceNext.set({ instance, what }, Date.parse(iso) / 1000);
    touchCounters(instance);
    if (s.resources) {
      f.rss.set({ instance }, s.resources.rssBytes);
      f.cpu.inc({ instance }, s.resources.cpuSeconds);
    }
    if (typeof s.players === 'number') f.players.set({ instance }, s.players);
    for (const h of s.hub?.hubs ?? []) {
      if (h.listed !== null) f.hubListed.set({ instance, hub: h.hub }, h.listed ? 1 : 0);
      if (h.missingSince !== null)
        f.hubMissing.set({ instance, hub: h.hub }, Math.max(0, (now - Date.parse(h.missingSince)) / 1000));
    }
  };

  /** Sets every gauge read from a status; synchronous, so a concurrent scrape sees one whole snapshot or the other. */
  const refresh = () => {
    states ??= statePaths();
    const statuses = registry.list().map((i) => i.status());
    const now = Date.now();
    // The CPU time is a counter, which cannot be set: reset too, then the status's total is added.
    for (const m of [f.info, f.state, f.sinceCheckin, f.uptime, f.startupFailures, f.rss, f.cpu, f.players]) m.reset();
    for (const m of [f.hubListed, f.hubMissing, f.maintenancePending, f.maintenanceNext]) m.reset();
    for (const s of statuses) setInstance(states, s, now);
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
    if (connections && opts.connections) {
      const { open, refused, evicted } = opts.connections();
      connections.open.set(open);
      // A counter tracking a total kept by the guard: reset and added, as counters cannot be set.
      connections.dropped.reset();
      for (const cap of ['total', 'source'] as const) {
        connections.dropped.inc({ action: 'refused', cap }, refused[cap]);
        connections.dropped.inc({ action: 'evicted', cap }, evicted[cap]);
      }
    }
  };

  return {
    contentType: reg.contentType,
    /** The exposition text; a server's CPU, memory and players are its status's last sample. */
    async metrics(): Promise<string> {
      const keys = new Set(registry.list().map((i) => i.key));
      for (const name of LAST_SUCCESS)
        for (const { labels } of (await f[name].get()).values) {
          const instance = String(labels.instance);
          if (keys.has(instance)) continue;
          f[name].remove({ instance });
          // Added back by a reload, it reports its newest snapshot on disk again.
          lastBackupAt.delete(instance);
        }
      refresh();
      return reg.metrics();
    },
    /** Stops listening on the bus and the event-loop monitor. */
    stop(): void {
      stopped = true;
      unsubscribe();
      loop?.disable();
    },
  };
}

export type MetricsCollector = ReturnType<typeof createMetricsCollector>;
