import type { InstanceControl, InstanceRegistry } from './contract.ts';
import type { InstanceStatus } from './status.ts';

/** What the daemon adds to every instance's status beside the instance's own facts (the GameServer, the disks). */
export type StatusExtras = Pick<InstanceStatus, 'agones' | 'disk' | 'hub'>;

/**
 * The registry whose instances' status carries what `extras()` gives at the moment it is read (nothing while it
 * gives null). One proxy per instance, made once: every check-in looks its instance up through here.
 */
export function withStatusExtras(
  registry: InstanceRegistry,
  extras: (key: string) => StatusExtras | null,
): InstanceRegistry {
  const made = new WeakMap<InstanceControl, InstanceControl>();
  const decorate = (control: InstanceControl): InstanceControl => {
    const known = made.get(control);
    if (known) return known;
    // A proxy rather than a copy: every other member stays the instance's own, bound to it.
    const proxy = new Proxy(control, {
      get(target, prop) {
        if (prop === 'status')
          return () => {
            const more = extras(target.key);
            return more ? { ...target.status(), ...more } : target.status();
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
