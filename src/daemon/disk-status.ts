import type { DiskReading } from '../bus.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import { withStatusExtras } from '../supervisor/status-extras.ts';

/**
 * The registry whose instances' status carries `disk` (the watched file systems, src/daemon/disk-watch.ts) once the
 * watcher has read them; so `GET /api/instances`, `watchdog status` and the dashboard's cards show a low disk.
 */
export function withDiskStatus(registry: InstanceRegistry, readings: () => DiskReading[]): InstanceRegistry {
  return withStatusExtras(registry, () => {
    const disk = readings();
    return disk.length > 0 ? { disk } : null;
  });
}
