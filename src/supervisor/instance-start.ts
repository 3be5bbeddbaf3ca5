/** An instance started (by the daemon or a reload): folder and data.json ready, a previous daemon's server handled. */
import { join } from 'node:path';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import { createDataDbImport } from '../import/data-db-import.ts';
import type { Logger } from '../log.ts';
import { makeDir } from '../make-dir.ts';
import { adoptedProcess, followAdoptedLog } from '../process/adopted-process.ts';
import { shutdownGracefully, shutdownWindows } from '../process/graceful.ts';
import { TOKEN_ENV } from '../process/launch-spec.ts';
import { findProcessByEnv, readProcessStartTime, verifyProcess } from '../process/proc-info.ts';
import {
  type InstanceData,
  type LaunchData,
  readInstanceData,
  type SpawningData,
  writeInstanceData,
} from '../store/instance-data.ts';
import { createProvider } from '../updates/factory.ts';
import { recoverInterruptedInstall, rollbackBin } from '../updates/install/install.ts';
import { createInstance } from './instance.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { echoServerLine, serverLogOptions } from './server-log.ts';

export const INSTANCE_SUBDIRS = ['binaries', 'bin', 'data', 'logs', 'dumps'] as const;

export async function prepareInstanceDir(dir: string): Promise<void> {
  try {
    for (const sub of INSTANCE_SUBDIRS) await makeDir(join(dir, sub));
  } catch (err) {
    throw new Error(
      `could not create the instance folder ${dir} (${describeError(err)}); check that its parent is writable`,
      { cause: err },
    );
  }
}

export type StarterOptions = Pick<InstanceDeps, 'bus' | 'log' | 'baseUrl' | 'tracking' | 'statusExtras' | 'inspect'> & {
  /** What clients are given: `BaseUrl`, or the local address. */
  publicBaseUrl: string;
  reachesUs?: (url: string) => boolean;
};

export function createInstanceStarter(opts: StarterOptions, config: () => ResolvedConfig) {
  const { bus, log } = opts;
  const followers = new Map<string, () => void>();

  const providerFor = (instance: ResolvedInstance, ilog: Logger) =>
    createProvider({
      instance,
      publicBaseUrl: opts.publicBaseUrl,
      log: ilog.child('update'),
      progress: (p) => bus.emit('instance:update', { key: instance.key, ...p, at: Date.now() }),
    });

  // The real watchdog's data.db (Data.File): read once, and only when an instance without data.json needs it.
  const dataDb = createDataDbImport({
    file: config().dataFile,
    persistServers: () => config().persistServers,
    log,
  });

  /** Built, not started, with the verified server the previous daemon left for it. */
  async function prepare(instance: ResolvedInstance) {
    const ilog = log.child(instance.key);
    await prepareInstanceDir(instance.dir);
    await recoverInterruptedInstall(instance.dir);
    // A verified server found in data.db becomes the launch record, adopted (or shut down) below.
    await dataDb.importInto(instance, ilog);
    const updateType = instance.settings.UpdateType ?? null;
    const data = await readInstanceData(instance.dir, updateType, ilog);
    const store = createDataWriter(
      instance.dir,
      { ...data, updateType },
      ilog,
      () => config().timing.LogRetrySeconds * 1000,
    );
    // A server whose spawn the previous daemon had not recorded yet is newer than any `launch` record.
    const leftover =
      (await findLeftover(await findSpawned(data.spawning ?? null, ilog), ilog)) ??
      (await findLeftover(data.launch, ilog));
    const inst = createInstance({
      config: config(),
      instance,
      bus,
      log: ilog,
      baseUrl: opts.baseUrl,
      provider: providerFor(instance, ilog),
      revision: data.revision,
      recordRevision: (revision) => store.write({ previousRevision: store.current().revision, revision }),
      // The launch records only have to outlive a killed daemon, which needs no fsync (a power loss takes the servers
      // too), and two fsyncs on a loaded disk would hold up the relaunch's spawning record.
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
      adoptable: () => leftover,
      tracking: opts.tracking,
      statusExtras: opts.statusExtras,
      inspect: opts.inspect,
      savedMaintenance: data.maintenance ?? null,
      recordMaintenance: (maintenance) => store.write({ maintenance }),
      savedStop: data.stopped ?? null,
      recordStop: (stopped) => store.write({ stopped }),
    });
    return { inst, instance, leftover };
  }

  /** Echoes an adopted server's log like a launched one's, and keeps the file bounded. */
  function follow(instance: ResolvedInstance, leftover: LaunchData): void {
    const { key } = instance;
    const serverLog = log.child(key).child('server');
    followers.get(key)?.();
    const follower = followAdoptedLog({
      pid: leftover.pid,
      startTime: leftover.startTime,
      ...serverLogOptions(config(), instance, bus),
      onLine: (line) => echoServerLine(bus, serverLog, key, 'stdout', line),
    });
    // The next launch follows its own output; stop at once rather than at the next liveness poll.
    const onLaunch = (e: { key: string }) => {
      if (e.key === key) stop();
    };
    const stop = () => {
      bus.off('instance:launch', onLaunch);
      follower.stop();
      if (followers.get(key) === stop) followers.delete(key);
    };
    bus.on('instance:launch', onLaunch);
    followers.set(key, stop);
  }

  /** Starts one prepared instance: adopts its leftover (PersistServers), or shuts the leftover down first. */
  async function launch({ inst, instance, leftover }: Awaited<ReturnType<typeof prepare>>): Promise<void> {
    const ilog = log.child(inst.key);
    if (leftover && config().persistServers) {
      const recorded = recordedBaseUrl(leftover);
      if (recorded === null || recorded === opts.baseUrl || opts.reachesUs?.(recorded)) {
        follow(instance, leftover);
        inst.start(leftover.pid);
        return;
      }
      // Its check-ins go to an address this daemon does not answer: adopted, it would only be killed as hung.
      ilog.warn(
        "the server left running checks in to another address than this daemon's; shutting it down and launching a new one " +
          '(keep Urls fixed when using PersistServers)',
        { pid: leftover.pid, recorded, baseUrl: opts.baseUrl },
      );
    } else if (leftover) {
      // PersistServers is off: shut it down first, or the new server fights it for the port.
      ilog.warn('shutting down a server left behind by a previous daemon', { pid: leftover.pid });
    }
    if (leftover) {
      const { pid, secret } = leftover;
      await shutdownGracefully(adoptedProcess(pid, leftover.startTime, 100), {
        apiPort: instance.settings.ApiPort,
        secret,
        reason: 'Watchdog restarted',
        ...shutdownWindows(config()),
        log: ilog,
      }).then(
        (how) =>
          ilog.info(
            how === 'exited'
              ? 'the leftover server exited after the shutdown request'
              : 'the leftover server was killed',
            { pid },
          ),
        (err: unknown) => ilog.error('could not shut down the leftover server', { pid, error: describeError(err) }),
      );
    }
    // The one sweep of earlier launches' leftovers, even if it stays stopped; later ones die with their server.
    const left = (await opts.tracking?.sweep(inst.key).catch(() => [])) ?? [];
    if (left.length > 0) {
      ilog.warn(`killed ${left.length} process(es) left by the previous daemon's launches`, { pids: left.join(' ') });
      bus.emit('instance:stragglers', { key: inst.key, pids: left, when: 'relaunch', at: Date.now() });
    }
    inst.start(null);
  }

  return {
    prepare,
    launch,
    providerFor,
    /** Stops following the adopted server of `key`, or of every key. */
    unfollow(key?: string): void {
      for (const [k, stop] of followers) if (key === undefined || k === key) stop();
    },
  };
}

/**
 * The server recorded in data.json, if it still runs. A pid is only trusted when its start time and command line
 * match the launch record: after a reboot or a long time, the pid may belong to an unrelated process, which we must
 * neither adopt nor kill.
 */
export async function findLeftover(record: LaunchData | null, log: Logger): Promise<LaunchData | null> {
  if (!record) return null;
  if (await verifyProcess(record.pid, { startTime: record.startTime, args: [record.program, ...record.args] }))
    return record;
  log.info('the server recorded in data.json is gone (or its pid was reused); nothing to adopt', { pid: record.pid });
  return null;
}

/**
 * The server of a launch the previous daemon was spawning when it died (data.json `spawning`, written before the
 * spawn), as a launch record: found by its command line and the launch's secret in its environment. Null when
 * there was no such launch, or its spawn never happened or the server is gone.
 */
async function findSpawned(spawning: SpawningData | null, log: Logger): Promise<LaunchData | null> {
  if (!spawning) return null;
  const pid = await findProcessByEnv([spawning.program, ...spawning.args], TOKEN_ENV, spawning.secret);
  const startTime = pid === null ? null : await readProcessStartTime(pid);
  if (pid === null || startTime === null) return null;
  log.warn('found a server the previous daemon launched but had not recorded yet', { pid });
  return { ...spawning, pid, startTime };
}

/** The `watchdog.baseUrl` the recorded server checks in to, or null; the last wins (`Arguments` may override ours). */
function recordedBaseUrl(record: LaunchData): string | null {
  const prefix = 'watchdog.baseUrl=';
  const found = record.args.findLast((arg, i) => record.args[i - 1] === '--cvar' && arg.startsWith(prefix));
  return found?.slice(prefix.length) ?? null;
}

/** data.json writes for one instance go through one copy of its data, so fields never overwrite each other. */
export function createDataWriter(dir: string, initial: InstanceData, log: Logger, retryMs: () => number) {
  let data = initial;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;

  const attempt = async (opts?: { durable?: boolean }): Promise<void> => {
    try {
      await writeInstanceData(dir, data, opts);
      if (failing) log.info('data.json written again');
      failing = false;
    } catch (err) {
      if (!failing)
        log.error(`${describeError(err)}; the previous data.json is kept, trying again every ${retryMs() / 1000} s`, {
          dir,
        });
      failing = true;
      retryLater();
    }
  };
  const retryLater = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void attempt();
    }, retryMs());
    // A retry never keeps the daemon alive; the data is written by the next change or start anyway.
    timer.unref();
  };

  return {
    /** Never rejects: a failed write keeps the previous data.json, is logged once and retried with the newest data. */
    write(patch: Partial<InstanceData>, opts?: { durable?: boolean }): Promise<void> {
      data = { ...data, ...patch };
      return attempt(opts);
    },
    current: (): InstanceData => data,
  };
}
