import type { DiskReading } from '../bus.ts';
import type { InstanceControl, InstanceRegistry } from '../supervisor/contract.ts';

/**
 * The registry whose instances' status carries `disk` (the watched file systems, src/daemon/disk-watch.ts) once the
 * watcher has read them; so `GET /api/instances`, `watchdog status` and the dashboard's cards show a low disk.
 */
export function withDiskStatus(registry: InstanceRegistry, readings: () => DiskReading[]): InstanceRegistry {
  // One proxy per instance, made once: every check-in looks its instance up through here.
  const made = new WeakMap<InstanceControl, InstanceControl>();
  const decorate = (control: InstanceControl): InstanceControl => {
    const known = made.get(control);
    if (known) return known;
    // A proxy rather than a copy: every other member stays the instance's own, bound to it.
    const proxy = new Proxy(control, {
      get(target, prop) {
        if (prop === 'status')
          return () => {
            const disk = readings();
            return disk.length > 0 ? { ...target.status(), disk } : target.status();
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    made.set(control, proxy);
    return proxy;
  };
  return {
    get: (key) => {
      const control = registry.get(key);
      return control && decorate(control);
    },
    list: () => registry.list().map(decorate),
    starting: registry.starting,
  };
}
