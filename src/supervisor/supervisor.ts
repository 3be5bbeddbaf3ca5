import type { Bus, BusEvents, UpdatePhase } from '../bus.ts';
import { monotonicMs } from '../clock.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Instance } from './instance.ts';
import { createInstanceStarter, type StarterOptions } from './instance-start.ts';

/** What a configuration reload changed, by instance key. */
export interface ReconfigureResult {
  added: string[];
  removed: string[];
  updated: string[];
  /** Added instances whose folder could not be prepared (logged); they are not running. */
  failed: string[];
}

/** The registry of instances: starts them all, applies reloads (adds, removes, reconfigures), shuts them down. */
export function createSupervisor(opts: StarterOptions & { config: ResolvedConfig }) {
  const { bus, log } = opts;
  let config = opts.config;
  const instances = new Map<string, Instance>();
  /** Removed instances still shutting down: re-adding one waits (they share data.json). */
  const retiring = new Map<string, Promise<void>>();
  /** Configured instances not registered yet (being prepared at start or by a reload): their requests get 503. */
  const preparing = new Set<string>();
  /** Added instances being prepared; shutdown waits for them so none starts after it. */
  const adding = new Set<Promise<boolean>>();
  /** Until start() has registered every configured instance, the list is not whole. */
  let registered = false;
  let closing = false;
  const stopProgressLog = logUpdateProgress(bus, log);
  const starter = createInstanceStarter(opts, () => config);

  const shutdownTimeoutMs = () => {
    const t = config.timing;
    return (t.ShutdownRequestSeconds + t.ShutdownExitSeconds) * 1000 + 3000;
  };

  async function retire(key: string, inst: Instance): Promise<void> {
    instances.delete(key);
    starter.unfollow(key);
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
      const prepared = await starter.prepare(instance).finally(() => preparing.delete(instance.key));
      if (closing) return false;
      instances.set(instance.key, prepared.inst);
      log.info('instance added by a configuration reload; starting it', { key: instance.key });
      await starter.launch(prepared);
      return true;
    } catch (err) {
      log.error('could not start an added instance', { key: instance.key, error: describeError(err) });
      return false;
    }
  }

  return {
    get: (key: string): Instance | undefined => instances.get(key),
    list: (): Instance[] => [...instances.values()],
    starting: (key: string): boolean => preparing.has(key),
    startingUp: (): boolean => !registered,

    /** Prepares folders, adopts or shuts down servers left by the previous daemon, then starts every instance. */
    async start(): Promise<void> {
      for (const i of config.instances) preparing.add(i.key);
      const prepared = await Promise.all(config.instances.map(starter.prepare)).finally(() => preparing.clear());
      for (const p of prepared) instances.set(p.inst.key, p.inst);
      registered = true;
      // Leftovers are shut down in parallel; each instance launches as soon as its own port is free.
      await Promise.all(prepared.map(starter.launch));
    },

    /** Shuts every server down gracefully (or detaches with PersistServers) and stops every actor. */
    async shutdown(): Promise<void> {
      closing = true;
      await Promise.allSettled(adding);
      starter.unfollow();
      const timeoutMs = shutdownTimeoutMs();
      await Promise.all([
        ...[...instances.values()].map((i) => i.shutdown(config.persistServers, timeoutMs)),
        ...retiring.values(),
      ]);
      stopProgressLog();
    },

    /** Resolves once every added instance started and every removed one is down. Never rejects. */
    async reconfigure(next: ResolvedConfig): Promise<ReconfigureResult> {
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
          inst.reconfigure(next, instance, () => starter.providerFor(instance, log.child(instance.key)));
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

export type Supervisor = ReturnType<typeof createSupervisor>;

/** The bus gets download progress every 250 ms, which would flood the log. */
export const UPDATE_PROGRESS_LOG_EVERY_MS = 5_000;

type UpdateEvent = BusEvents['instance:update'];

/** The update actor logs the outcome (done, failed) itself. */
const WORK_PHASES: Partial<Record<UpdatePhase, string>> = {
  download: 'downloading update',
  verify: 'update download complete',
  extract: 'extracting update',
  install: 'moving the new build into bin/',
};

function sizeFields(e: UpdateEvent): Record<string, number> {
  if (!e.bytes) return {};
  if (e.total === undefined || e.total === null) return { bytes: e.bytes };
  const percent = e.total === 0 ? 100 : Math.floor((e.bytes / e.total) * 1000) / 10;
  return { bytes: e.bytes, total: e.total, percent };
}

/** A log line per update phase, and one per `everyMs` while downloading; returns the unsubscribe function. */
export function logUpdateProgress(
  bus: Bus,
  log: Logger,
  everyMs = UPDATE_PROGRESS_LOG_EVERY_MS,
  now: () => number = monotonicMs,
): () => void {
  const seen = new Map<string, { phase: UpdatePhase; loggedAt: number }>();
  const handler = (e: UpdateEvent) => {
    const message = WORK_PHASES[e.phase];
    if (message === undefined) {
      // check / none / done / failed: the run begins or ends, so the next download is announced afresh.
      seen.delete(e.key);
      return;
    }
    const prev = seen.get(e.key);
    const ilog = log.child(e.key).child('update');
    // A download event with no bytes yet is a download starting (artifact.ts, git.ts), even right after another.
    const restarted = e.phase === 'download' && !e.bytes;
    if (prev && prev.phase === e.phase && !restarted) {
      if (e.phase !== 'download' || now() - prev.loggedAt < everyMs) return;
      seen.set(e.key, { ...prev, loggedAt: now() });
      ilog.info('update download progress', sizeFields(e));
      return;
    }
    seen.set(e.key, { phase: e.phase, loggedAt: now() });
    ilog.info(message, sizeFields(e));
  };
  bus.on('instance:update', handler);
  return () => {
    bus.off('instance:update', handler);
    seen.clear();
  };
}
