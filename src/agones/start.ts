import type { Bus } from '../bus.ts';
import type { ResolvedConfig } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { AgonesWrapper } from './wrapper.ts';

/**
 * Agones mode for the composition root: the wrapper of the one configured instance (config checks made sure there
 * is exactly one), or null when Agones mode is off. Made before the instances start, so it sees the first check-in.
 * Loaded only in Agones mode: the SDK client brings an HTTP client and its fetch polyfill, which load Node's undici.
 */
export async function startAgones(
  config: ResolvedConfig,
  bus: Bus,
  log: Logger,
  registry: InstanceRegistry,
): Promise<AgonesWrapper | null> {
  const instance = config.instances[0];
  if (!config.agones || !instance) return null;
  // Dynamic, so only Agones mode loads the SDK client; loaded at start, before a flood could hold every descriptor.
  const { startAgonesWrapper } = await import('./wrapper.ts');
  return startAgonesWrapper({
    config: config.agones,
    instance: {
      key: instance.key,
      apiPort: instance.settings.ApiPort,
      state: () => registry.get(instance.key)?.status().state ?? 'stopped.idle',
      crashStreak: () => registry.get(instance.key)?.status().crashStreak ?? 0,
    },
    bus,
    log: log.child('agones'),
  });
}
