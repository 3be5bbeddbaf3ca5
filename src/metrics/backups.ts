import type { Registry } from 'prom-client';
import { type Bus, subscribe } from '../bus.ts';
import { Tally } from './tally.ts';

const RESULTS = ['ok', 'failed'] as const;

/** Snapshots by result, when one last worked and its size: a backup that stopped working is an alert rule away. */
export async function createBackupFamilies(registry: Registry) {
  const { Counter, Gauge } = (await import('prom-client')).default;
  const registers = [registry];
  // biome-ignore format: one metric a line
  return {
    backups: new Counter({ name: 'watchdog_backups_total', help: "Snapshots of an instance's data that ended, by result: ok, failed.", labelNames: ['instance', 'result'] as const, registers }),
    lastSuccess: new Gauge({ name: 'watchdog_backup_last_success_timestamp_seconds', help: 'When a snapshot of the instance last worked (Unix time); absent until one has.', labelNames: ['instance'] as const, registers }),
    lastSize: new Gauge({ name: 'watchdog_backup_last_size_bytes', help: 'The compressed size of the last snapshot that worked.', labelNames: ['instance'] as const, registers }),
  };
}
export type BackupFamilies = Awaited<ReturnType<typeof createBackupFamilies>>;

/**
 * Tallies `instance:backup` from the daemon's start and writes it into the families at each scrape. The last success
 * starts from `instance:backup-found` (the newest snapshot on disk), so a daemon restart does not empty it.
 */
export function tallyBackups(bus: Bus) {
  const counts = new Tally<'instance' | 'result'>();
  const last = new Map<string, { at: number; bytes: number }>();
  const unsubscribe = subscribe(bus, {
    'instance:backup': (e) => {
      counts.inc({ instance: e.key, result: e.ok ? 'ok' : 'failed' });
      if (e.ok) last.set(e.key, { at: e.at, bytes: e.archiveBytes ?? 0 });
    },
    // A snapshot taken since the daemon started is newer than any found on disk.
    'instance:backup-found': (e) => {
      if ((last.get(e.key)?.at ?? Number.NEGATIVE_INFINITY) < e.at)
        last.set(e.key, { at: e.at, bytes: e.archiveBytes });
    },
  });
  return {
    refresh(f: BackupFamilies, instances: readonly string[]): void {
      f.backups.reset();
      f.lastSuccess.reset();
      f.lastSize.reset();
      for (const instance of instances) for (const result of RESULTS) f.backups.inc({ instance, result }, 0);
      for (const { labels, n } of counts.entries()) f.backups.inc(labels, n);
      for (const [instance, { at, bytes }] of last) {
        if (!instances.includes(instance)) continue;
        f.lastSuccess.set({ instance }, at / 1000);
        f.lastSize.set({ instance }, bytes);
      }
    },
    stop: unsubscribe,
  };
}
