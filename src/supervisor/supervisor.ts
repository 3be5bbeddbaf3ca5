import type { Bus } from '../bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import { createDataDbImport } from '../import/data-db-import.ts';
import type { Logger } from '../log.ts';
import { followAdoptedLog } from '../process/adopted-process.ts';
import { findLeftover, findSpawned, type Leftover, recordedBaseUrl } from '../process/leftovers.ts';
import type { ProcessTracking } from '../process/tracking.ts';
import { readInstanceData } from '../store/instance-data.ts';
import { prepareInstanceDir } from '../store/instance-dir.ts';
import { createProvider } from '../updates/factory.ts';
import { recoverInterruptedInstall, rollbackBin } from '../updates/install/install.ts';
import type { InstanceRegistry } from './contract.ts';
import { createDataWriter } from './data-writer.ts';
import { Instance } from './instance.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { logRetryMs, serverLogHealth, serverLogRotation } from './log-health.ts';
import { echoServerLine } from './server-echo.ts';
import { logUpdateProgress } from './update-progress-log.ts';

/** What a configuration reload changed, by instance key. */
export interface ReconfigureResult {
  added: string[];
  removed: string[];
  updated: string[];
  /** Added instances whose folder could not be prepared (logged); they are not running. */
  failed: string[];
}

export interface Supervisor extends InstanceRegistry {
  starting(key: string): boolean;
  /** Prepares folders, adopts or cleans up servers left by the previous daemon, then starts every instance. */
  start(): Promise<void>;
  /** Shuts every server down gracefully (or detaches with PersistServers) and stops every actor. */
  shutdown(): Promise<void>;
  /**
   * Applies a reloaded configuration: existing instances take their new settings at their next launch (timings
   * at once), added ones are prepared and started, removed ones are shut down gracefully and leave the registry.
   * Resolves once every added instance started and every removed one is down. Never rejects.
   */
  reconfigure(next: ResolvedConfig): Promise<ReconfigureResult>;
}

interface Prepared {
  inst: Instance;
  instance: ResolvedInstance;
  leftover: Leftover | null;
}

export interface SupervisorOptions {
  config: ResolvedConfig;
  bus: Bus;
  log: Logger;
  /** Where servers check in (`watchdog.baseUrl`): an address this daemon listens on. */
  baseUrl: string;
  /** `BaseUrl`, or the local address: what clients are given (client downloads). */
  publicBaseUrl: string;
  /** Whether a server told to check in at this URL reaches this daemon (for adopting servers left running). */
  reachesUs?: (url: string) => boolean;
  /** How launches' processes are tracked (detected at start); without it only process groups are killed. */
  tracking?: ProcessTracking;
  statusExtras?: InstanceDeps['statusExtras'];
}

export function createSupervisor(opts: SupervisorOptions): Supervisor {
  const { bus, log } = opts;
  let config = opts.config;
  const instances = new Map<string, Instance>();
  /** Log followers of adopted servers, by key (a launched server's log is followed by its spawn). */
  const followers = new Map<string, { stop(): void }>();
  /** Removed instances still shutting down, by key: re-adding one waits, as both would share data.json. */
  const retiring = new Map<string, Promise<void>>();
  /** Configured instances not registered yet (being prepared at start or by a reload): their requests get 503. */
  const preparing = new Set<string>();
  /** Added instances being prepared; shutdown waits for them so none starts after it. */
  const adding = new Set<Promise<boolean>>();
  let closing = false;
  // Progress reaches the bus several times a second; the log gets phase changes and a line every few seconds.
  const stopProgressLog = logUpdateProgress(bus, log);

  const providerFor = (instance: ResolvedInstance, ilog: Logger) =>
    createProvider({
      instance,
      publicBaseUrl: opts.publicBaseUrl,
      log: ilog.child('update'),
      progress: (p) => bus.emit('instance:update', { key: instance.key, ...p, at: Date.now() }),
    });

  // The real watchdog's data.db (Data.File): read once, and only when an instance without data.json needs it.
  const dataDb = createDataDbImport({ file: config.dataFile, persistServers: () => config.persistServers, log });

  const shutdownTimeoutMs = () => {
    const t = config.timing;
    return (t.ShutdownRequestSeconds + t.ShutdownExitSeconds) * 1000 + 3000;
  };

  async function prepare(instance: ResolvedInstance): Promise<Prepared> {
    const ilog = log.child(instance.key);
    await prepareInstanceDir(instance.dir);
    await recoverInterruptedInstall(instance.dir);
    // Writes data.json from data.db when there is none yet; a verified server found there becomes its launch
    // record, so the leftover check below adopts it (or shuts it down first, without PersistServers).
    await dataDb.importInto(instance, ilog);
    const updateType = instance.settings.UpdateType ?? null;
    const data = await readInstanceData(instance.dir, updateType, ilog);
    const store = createDataWriter(
      instance.dir,
      { ...data, updateType },
      ilog,
      () => config.timing.LogRetrySeconds * 1000,
    );
    // A server whose spawn the previous daemon had not recorded yet is newer than any `launch` record.
    const leftover =
      (await findLeftover(await findSpawned(data.spawning ?? null, ilog), ilog)) ??
      (await findLeftover(data.launch, ilog));
    const inst = new Instance({
      config,
      instance,
      bus,
      log: ilog,
      baseUrl: opts.baseUrl,
      provider: providerFor(instance, ilog),
      revision: data.revision,
      recordRevision: (revision) => store.write({ previousRevision: store.current().revision, revision }),
      // The launch records only have to outlive a killed daemon, which needs no fsync: a power loss takes the servers
      // with them, and a stale record names a pid that is then dead. Two fsyncs cost a loaded disk hundreds of ms,
      // and writes to data.json queue: the record cleared at an exit would hold up the spawning record of the
      // relaunch that follows it, before its spawn.
      recordLaunch: (launch) => store.write({ launch, spawning: null }, { durable: false }),
      // Before the spawn and so inside the server's check-in window.
      recordSpawning: (spawning) => store.write({ spawning }, { durable: false }),
      previousRevision: () => store.current().previousRevision,
      rollback: async () => {
        await rollbackBin(instance.dir);
        const { revision, previousRevision } = store.current();
        await store.write({ revision: previousRevision, previousRevision: revision });
        return previousRevision;
      },
      adoptable: () => (leftover ? leftover.record : null),
      tracking: opts.tracking,
      statusExtras: opts.statusExtras,
      savedMaintenance: data.maintenance ?? null,
      recordMaintenance: (maintenance) => store.write({ maintenance }),
      savedStop: data.stopped ?? null,
      recordStop: (stopped) => store.write({ stopped }),
    });
    return { inst, instance, leftover };
  }

  /** Echoes an adopted server's log like a launched one's, and keeps the file bounded. */
  function follow(instance: ResolvedInstance, leftover: Leftover): void {
    const key = instance.key;
    const serverLog = log.child(key).child('server');
    followers.get(key)?.stop();
    const follower = followAdoptedLog({
      pid: leftover.record.pid,
      startTime: leftover.record.startTime,
      logDir: `${instance.dir}/logs`,
      rotation: serverLogRotation(config, instance),
      retryMs: logRetryMs(config),
      health: serverLogHealth(key, `${instance.dir}/logs/server.log`, bus),
      onLine: (line) => echoServerLine(bus, serverLog, key, 'stdout', line),
    });
    // The next launch follows its own output; stop at once rather than at the next liveness poll.
    const onLaunch = (e: { key: string }) => {
      if (e.key === key) stop();
    };
    const stop = () => {
      bus.off('instance:launch', onLaunch);
      follower.stop();
      if (followers.get(key) === entry) followers.delete(key);
    };
    const entry = { stop };
    bus.on('instance:launch', onLaunch);
    followers.set(key, entry);
  }

  /** Starts one prepared instance: adopts its leftover (PersistServers), or shuts the leftover down first. */
  async function launch({ inst, instance, leftover }: Prepared): Promise<void> {
    const ilog = log.child(inst.key);
    if (leftover && config.persistServers) {
      const recorded = recordedBaseUrl(leftover.record);
      if (recorded === null || recorded === opts.baseUrl || opts.reachesUs?.(recorded)) {
        follow(instance, leftover);
        inst.start(leftover.record.pid);
        return;
      }
      // Its check-ins go to an address this daemon does not answer: adopted, it would only be killed as hung.
      ilog.warn(
        "the server left running checks in to another address than this daemon's; shutting it down and launching a new one " +
          '(keep Urls fixed when using PersistServers)',
        { pid: leftover.record.pid, recorded, baseUrl: opts.baseUrl },
      );
    } else if (leftover) {
      // PersistServers is off but the previous daemon died with this server running: shut it down first,
      // or the new server fights it for the port.
      ilog.warn('shutting down a server left behind by a previous daemon', { pid: leftover.record.pid });
    }
    if (leftover) {
      await leftover.shutDown(config, instance).catch((err: unknown) =>
        ilog.error('could not shut down the leftover server', {
          pid: leftover.record.pid,
          error: describeError(err),
        }),
      );
    }
    // What is left of earlier launches (a helper that escaped its server's group, or a server the previous daemon
    // launched but could not record, data.json being unwritable on a full disk) is found by its tracking and ended
    // now: left alone it would play and write its log, for good if the instance stays stopped. The one sweep: the
    // launch's port guard then finds the port free, and each later launch's leftovers die with its server.
    const left = (await opts.tracking?.sweep(inst.key).catch(() => [])) ?? [];
    if (left.length > 0) {
      ilog.warn(`killed ${left.length} process(es) left by the previous daemon's launches`, { pids: left.join(' ') });
      bus.emit('instance:stragglers', { key: inst.key, pids: left, when: 'relaunch', at: Date.now() });
    }
    inst.start(null);
  }

  async function retire(key: string, inst: Instance): Promise<void> {
    instances.delete(key);
    followers.get(key)?.stop();
    followers.delete(key);
    log.info('instance removed from the configuration; shutting its server down', { key });
    const done = inst
      .shutdown(false, shutdownTimeoutMs())
      .catch((err: unknown) => log.error('could not shut down a removed instance', { key, error: describeError(err) }));
    retiring.set(key, done);
    await done;
    if (retiring.get(key) === done) retiring.delete(key);
  }

  async function add(instance: ResolvedInstance): Promise<boolean> {
    preparing.add(instance.key);
    await retiring.get(instance.key);
    try {
      const prepared = await prepare(instance).finally(() => preparing.delete(instance.key));
      if (closing) return false;
      instances.set(instance.key, prepared.inst);
      log.info('instance added by a configuration reload; starting it', { key: instance.key });
      await launch(prepared);
      return true;
    } catch (err) {
      log.error('could not start an added instance', { key: instance.key, error: describeError(err) });
      return false;
    }
  }

  return {
    get: (key) => instances.get(key),
    list: () => [...instances.values()],
    starting: (key) => preparing.has(key),

    async start() {
      for (const i of config.instances) preparing.add(i.key);
      const prepared = await Promise.all(config.instances.map(prepare)).finally(() => preparing.clear());
      for (const p of prepared) instances.set(p.inst.key, p.inst);
      // Leftovers are shut down in parallel; each instance launches as soon as its own port is free.
      await Promise.all(prepared.map(launch));
    },

    async shutdown() {
      closing = true;
      await Promise.allSettled(adding);
      for (const f of followers.values()) f.stop();
      followers.clear();
      const timeoutMs = shutdownTimeoutMs();
      await Promise.all([
        ...[...instances.values()].map((i) => i.shutdown(config.persistServers, timeoutMs)),
        ...retiring.values(),
      ]);
      stopProgressLog();
    },

    async reconfigure(next) {
      const result: ReconfigureResult = { added: [], removed: [], updated: [], failed: [] };
      if (closing) return result;
      config = next;
      const wanted = new Map(next.instances.map((i) => [i.key, i]));
      const work: Promise<unknown>[] = [];
      for (const [key, inst] of [...instances]) {
        if (wanted.has(key)) continue;
        result.removed.push(key);
        work.push(retire(key, inst));
      }
      for (const instance of next.instances) {
        const inst = instances.get(instance.key);
        if (inst) {
          inst.reconfigure(next, instance, () => providerFor(instance, log.child(instance.key)));
          result.updated.push(instance.key);
        } else {
          const added = add(instance);
          adding.add(added);
          work.push(
            added
              .then((ok) => (ok ? result.added : result.failed).push(instance.key))
              .finally(() => adding.delete(added)),
          );
        }
      }
      await Promise.all(work);
      return result;
    },
  };
}
