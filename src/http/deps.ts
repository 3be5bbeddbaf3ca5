import type { Bus } from '../bus.ts';
import type { Logger } from '../log.ts';
import type { InstanceRegistry } from './registry.ts';

/** What every route module receives from `createApp`. */
export interface HttpDeps {
  registry: InstanceRegistry;
  bus: Bus;
  log: Logger;
  version: string;
}
