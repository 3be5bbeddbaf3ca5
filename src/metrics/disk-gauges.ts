import { Gauge, type Registry } from 'prom-client';
import type { DiskReading } from '../bus.ts';

const L = ['holds', 'mount'] as const;

export type DiskFamilies = ReturnType<typeof createDiskFamilies>;

/** The disk-space gauges, registered in `registry`: one series per watched file system. */
export function createDiskFamilies(registry: Registry) {
  const registers = [registry];
  const gauge = (name: string, help: string) => new Gauge<(typeof L)[number]>({ name, help, labelNames: L, registers });
  // biome-ignore format: one metric a line
  return {
    free: gauge('watchdog_disk_free_bytes', 'Bytes the daemon may still write on the file system holding the instance root or the working folder (holds says which).'),
    total: gauge('watchdog_disk_total_bytes', 'Size of that file system in bytes.'),
    threshold: gauge('watchdog_disk_low_threshold_bytes', 'Below this many free bytes the file system counts as low (Disk.LowFreeMegabytes or Disk.LowFreePercent, the lower).'),
    low: gauge('watchdog_disk_low', '1 while the file system is low on space (the chat was told once), else 0.'),
  };
}

/** Sets the gauges from the last readings; a file system that could not be read has no series. */
export function setDiskFamilies(f: DiskFamilies, readings: readonly DiskReading[]): void {
  for (const g of Object.values(f)) g.reset();
  for (const r of readings) {
    if (r.freeBytes === null || r.totalBytes === null) continue;
    const labels = { holds: r.holds, mount: r.mount };
    f.free.set(labels, r.freeBytes);
    f.total.set(labels, r.totalBytes);
    if (r.thresholdBytes !== null) f.threshold.set(labels, r.thresholdBytes);
    f.low.set(labels, r.low ? 1 : 0);
  }
}
