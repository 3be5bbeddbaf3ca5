import type { Bus } from '../bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import type { InstanceRegistry } from '../http/registry.ts';
import type { Logger } from '../log.ts';
import { readInstanceData, writeInstanceData, type InstanceData } from '../store/instance-data.ts';
import { prepareInstanceDir } from '../store/instance-dir.ts';
import { createProvider } from '../updates/factory.ts';
import { recoverInterruptedInstall, rollbackBin } from '../updates/install.ts';
import { Instance } from './instance.ts';
import { findLeftover, type Leftover } from './leftovers.ts';

export interface Supervisor extends InstanceRegistry {
  /** Prepares folders, adopts or cleans up servers left by the previous daemon, then starts every instance. */
  start(): Promise<void>;
  /** Shuts every server down gracefully (or detaches with PersistServers) and stops every actor. */
  shutdown(): Promise<void>;
}

export function createSupervisor(opts: { config: ResolvedConfig; bus: Bus; log: Logger; baseUrl: string; publicBaseUrl: string }): Supervisor {
  const { bus, log } = opts;
  const config = opts.config;
  const instances = new Map<string, Instance>();

  const providerFor = (instance: ResolvedInstance, ilog: Logger) =>
    createProvider({
      instance,
      publicBaseUrl: opts.publicBaseUrl,
      log: ilog.child('update'),
      progress: (p) => bus.emit('instance:update', { key: instance.key, ...p, at: Date.now() }),
    });

  /** data.json writes for one instance go through one copy of its data, so fields never overwrite each other. */
  const dataWriter = (dir: string, initial: InstanceData) => {
    let data = initial;
    const write = (patch: Partial<InstanceData>) => {
      data = { ...data, ...patch };
      return writeInstanceData(dir, data);
    };
    return { write, current: () => data };
  };

  async function prepare(instance: ResolvedInstance): Promise<{ inst: Instance; instance: ResolvedInstance; leftover: Leftover | null }> {
    const ilog = log.child(instance.key);
    await prepareInstanceDir(instance.dir);
    await recoverInterruptedInstall(instance.dir);
    const updateType = instance.settings.UpdateType ?? null;
    const data = await readInstanceData(instance.dir, updateType, ilog);
    const store = dataWriter(instance.dir, { ...data, updateType });
    const leftover = await findLeftover(data.launch, ilog);
    const inst = new Instance({
      config,
      instance,
      bus,
      log: ilog,
      baseUrl: opts.baseUrl,
      provider: providerFor(instance, ilog),
      revision: data.revision,
      recordRevision: (revision) => store.write({ previousRevision: store.current().revision, revision }),
      recordLaunch: (launch) => store.write({ launch }),
      rollback: async () => {
        await rollbackBin(instance.dir);
        const { revision, previousRevision } = store.current();
        await store.write({ revision: previousRevision, previousRevision: revision });
        return previousRevision;
      },
      adoptable: () => (leftover ? leftover.record : null),
    });
    return { inst, instance, leftover };
  }

  return {
    get: (key) => instances.get(key),
    list: () => [...instances.values()],

    async start() {
      const prepared = await Promise.all(config.instances.map(prepare));
      for (const { inst, instance, leftover } of prepared) {
        instances.set(inst.key, inst);
        if (leftover && config.persistServers) {
          inst.start(leftover.record.pid);
          continue;
        }
        if (leftover) {
          // PersistServers is off but the previous daemon died with this server running: shut it down first,
          // or the new server fights it for the port.
          log.warn('shutting down a server left behind by a previous daemon', { key: inst.key, pid: leftover.record.pid });
          await leftover.shutDown(config, instance).catch((err: unknown) =>
            log.error('could not shut down the leftover server', { key: inst.key, error: describeError(err) }));
        }
        inst.start(null);
      }
    },

    async shutdown() {
      const t = config.timing;
      const timeoutMs = (t.ShutdownRequestSeconds + t.ShutdownExitSeconds) * 1000 + 3000;
      await Promise.all([...instances.values()].map((i) => i.shutdown(config.persistServers, timeoutMs)));
    },
  };
}
