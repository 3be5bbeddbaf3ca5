/** An instance's statechart given its actors and input; its state changes and facts go to the bus and the log. */
import { type Actor, createActor, fromPromise, type StateValue, waitFor } from 'xstate';
import type { PlayersInput, RestoreInput, RollbackInput } from '../../machines/instance.setup.ts';
import { instanceMachine } from '../../machines/instance.ts';
import type {
  InstanceEmitted,
  InstanceEvent,
  InstanceTiming,
  LastExit,
  MaintenanceRules,
  RestoreOutput,
  RollbackOutput,
} from '../../machines/instance.types.ts';
import type { BusEvents } from '../bus.ts';
import { monotonicMs, pollFirstClock, stampNow } from '../clock.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import { alertMessage, formatDelay } from '../notify/messages.ts';
import type { StopData } from '../store/instance-data.ts';
import { removeDisplacedBuilds } from '../updates/install/install.ts';
import type { BackupHost } from './backup-host.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { type InstanceResources, readPlayersWithin } from './instance-resources.ts';
import { announce, type InstanceSnapshot, type PlanKeeper } from './maintenance/plan.ts';
import type { MaintenanceSchedule } from './maintenance/schedule.ts';
import { createProcessHost } from './process-host.ts';
import { createRunProcess } from './run-process.ts';
import type { DownloadProgress } from './status.ts';
import { type CheckRecord, createCheckActor, createUpdateActor } from './update-actors.ts';

const ms = (seconds: number) => Math.round(seconds * 1000);

export function instanceTiming(config: ResolvedConfig, instance: ResolvedInstance): InstanceTiming {
  const t = config.timing;
  return {
    checkinTimeoutMs: ms(instance.settings.TimeoutSeconds),
    backoffInitialMs: ms(t.BackoffInitialSeconds),
    backoffMaxMs: ms(t.BackoffMaxSeconds),
    stableRunMs: ms(t.StableRunSeconds),
    startupFailureLimit: t.StartupFailureLimit,
  };
}

export function maintenanceRules({ config, instance }: InstanceDeps): MaintenanceRules {
  const m = instance.settings.Maintenance;
  return {
    when: m?.When ?? 'RoundEnd',
    maxDelayMs: (m?.MaxDelayMinutes ?? 120) * 60_000,
    pollMs: config.timing.MaintenancePollSeconds * 1000,
  };
}

/** The status name: the path in the `lifecycle` region (`stopped.idle`, `server.running`). */
export function statePath(value: StateValue): string {
  const lifecycle = typeof value === 'string' ? value : (value.lifecycle ?? value);
  return dotted(lifecycle as StateValue);
}

function dotted(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value)[0] ?? ['', ''];
  if (inner === undefined || (typeof inner === 'object' && Object.keys(inner).length === 0)) return key;
  return `${key}.${dotted(inner as StateValue)}`;
}

export function operatorStop(snap: InstanceSnapshot): StopData | null {
  return snap.matches({ operatorStop: 'stopped' }) ? { ...snap.context.stop } : null;
}

export function createChart(parts: {
  deps: InstanceDeps;
  resources: InstanceResources;
  backupHost: BackupHost;
  schedule: MaintenanceSchedule;
  plan: PlanKeeper;
  checks: CheckRecord;
}) {
  const { deps, resources, backupHost, plan } = parts;
  const { bus, log } = deps;
  const key = deps.instance.key;
  const download = createDownloadProgress();
  const onUpdateProgress = (e: BusEvents['instance:update']): void => {
    if (e.key === key) download.seen(e);
  };
  bus.on('instance:update', onUpdateProgress);
  /** Wall times are shown; the monotonic `*Ms` measure uptime and time since a check-in. */
  const times = {
    startedAt: null as number | null,
    startedMs: null as number | null,
    lastCheckinAt: null as number | null,
    lastCheckinMs: null as number | null,
    lastExit: null as { exit: LastExit; at: number } | null,
  };
  let lastState: string | null = null;
  let actor = make();

  function make(): Actor<typeof instanceMachine> {
    const processHost = createProcessHost(
      deps,
      () => actor.getSnapshot().context.revision,
      (pid, cgroup) => resources.launched(pid, cgroup),
    );
    const machine = instanceMachine.provide({
      actors: {
        runProcess: createRunProcess(processHost),
        update: createUpdateActor(deps, (to) => backupHost.beforeInstall(to)),
        checkUpdate: createCheckActor(deps),
        // Invoked with no server running; a failure (no bin.prev) is the machine's `rollback-failed`.
        rollback: fromPromise<RollbackOutput, RollbackInput>(async ({ input }) => ({
          revision: await (input.withData ? backupHost.rollBackWithData(() => deps.rollback()) : deps.rollback()),
        })),
        restore: fromPromise<RestoreOutput, RestoreInput>(({ input }) => backupHost.restore(input.id)),
        readPlayers: fromPromise<number | null, PlayersInput>(() =>
          readPlayersWithin(deps, deps.config.timing.MaintenancePollSeconds * 1000),
        ),
        maintenanceSchedule: parts.schedule.actor,
      },
    });
    const made = createActor(machine, {
      clock: pollFirstClock,
      ...(deps.inspect ? { inspect: deps.inspect } : {}),
      input: {
        key,
        timing: instanceTiming(deps.config, deps.instance),
        revision: deps.revision,
        maintenance: maintenanceRules(deps),
        stop: deps.savedStop ?? null,
      },
    });
    made.on('*', (e) => tell(e as InstanceEmitted));
    made.subscribe({
      next: (snap) => {
        const exit = snap.context.lastExit;
        if (exit !== null && exit !== times.lastExit?.exit) times.lastExit = { exit, at: Date.now() };
        resources.pidSeen(snap.context.pid);
        plan.seen(snap);
        const state = statePath(snap.value);
        if (state === lastState) return;
        bus.emit('instance:state', { key, state, previous: lastState, at: Date.now() });
        log.info(`state ${state}`, { from: lastState ?? '(new)' });
        lastState = state;
      },
      // The machine turns every failure into an event; if it ever errors anyway, the instance must not die with it.
      error: (err) => {
        log.error('instance statechart crashed; starting a fresh one', { error: describeError(err) });
        actor = make();
        actor.start();
        actor.send({ type: 'START' });
        // The hold outlives the fresh machine; a pending action is done by the relaunch, as at a daemon restart.
        const saved = plan.kept();
        if (saved) actor.send({ type: 'RESTORE_MAINTENANCE', saved, adopted: false, at: stampNow() });
      },
    });
    return made;
  }

  function tell(e: InstanceEmitted): void {
    const at = Date.now();
    if (announce({ key, bus, log: log.child('maintenance') }, e, at)) return;
    switch (e.type) {
      case 'alert': {
        // An operator's stop is information, not an alert.
        const level = e.kind === 'stopped' ? 'info' : 'alert';
        const message = alertMessage(key, e, e.by);
        if (level === 'info') log.info(message);
        else log.warn(message);
        bus.emit('instance:alert', { key, kind: e.kind, level, message, exit: e.exit, at });
        break;
      }
      case 'restart':
        bus.emit('instance:restart', { key, reason: e.reason, at });
        break;
      case 'launch':
        times.startedAt = at;
        times.startedMs = monotonicMs();
        times.lastCheckinAt = null;
        times.lastCheckinMs = null;
        break;
      case 'checkin':
        times.lastCheckinAt = at;
        times.lastCheckinMs = monotonicMs();
        // The server is up: the build an update displaced may go now without slowing its start.
        removeDisplacedBuilds(deps.instance.dir);
        bus.emit('instance:checkin', { key, launchId: e.launchId, at });
        break;
      case 'update-failed':
        log.error('update failed; starting the installed build', { error: e.message });
        break;
      case 'check-failed':
        log.warn('update check failed', { error: e.message });
        parts.checks.failed(e.message, at);
        download.end();
        break;
      case 'update-checked':
        parts.checks.succeeded(e.available, at);
        download.end();
        break;
      case 'rolled-back':
        log.info('rolled back to the previous build', { revision: e.revision ?? '(unknown)' });
        break;
      case 'rollback-failed':
        log.error('rollback failed', { error: e.message });
        break;
      case 'restored':
        log.info(`restored backup ${e.id}; the data it replaced is kept as backup ${e.saved}`);
        break;
      case 'restore-failed':
        log.error(`restoring backup ${e.id} failed`, { error: e.message });
        break;
      case 'launch-blocked': {
        const { kind, message, attempts, retryMs } = e;
        log.warn(`cannot launch: ${message}; retrying in ${formatDelay(retryMs)}`, { attempt: attempts });
        bus.emit('instance:launch-blocked', { key, kind, message, attempts, retryMs, at });
        break;
      }
      case 'launch-unblocked':
        log.info(`launched again after ${e.attempts} blocked attempt${e.attempts === 1 ? '' : 's'}`);
        bus.emit('instance:launch-unblocked', { key, kind: e.kind, attempts: e.attempts, at });
        break;
    }
  }

  return {
    times,
    download: download.status,
    start: () => actor.start(),
    stop: () => {
      bus.off('instance:update', onUpdateProgress);
      actor.stop();
    },
    send: (event: InstanceEvent) => actor.send(event),
    snapshot: (): InstanceSnapshot => actor.getSnapshot(),
    /** Resolves true once the `lifecycle` region has exited (the daemon's shutdown), false after `timeoutMs`. */
    exited: (timeoutMs: number): Promise<boolean> =>
      waitFor(actor, (snap) => snap.matches({ lifecycle: 'exited' }), { timeout: timeoutMs }).then(
        () => true,
        () => false,
      ),
  };
}

/**
 * A running update's download as the status shows it, fed its instance's `instance:update`: one with no bytes yet
 * begins afresh, any other phase ends it. The rate is measured on `now`, `since` is the event's wall time.
 */
export function createDownloadProgress(now: () => number = monotonicMs) {
  let current: { since: number; from: number; bytes: number; total: number | null; last: number } | null = null;
  return {
    seen(e: BusEvents['instance:update']): void {
      if (e.phase !== 'download') {
        current = null;
        return;
      }
      const bytes = e.bytes ?? 0;
      const t = now();
      if (current === null || bytes === 0 || bytes < current.bytes)
        current = { since: e.at, from: t, bytes, total: null, last: t };
      current = { ...current, bytes, total: e.total ?? null, last: t };
    },

    /** Its check ended (a check stages builds and reports no phase of its own at its end). */
    end(): void {
      current = null;
    },

    status(): DownloadProgress | null {
      if (current === null) return null;
      const { since, from, bytes, total, last } = current;
      const seconds = (last - from) / 1000;
      // Under half a second of data says little about the rate.
      const rate = seconds >= 0.5 ? Math.round(bytes / seconds) : null;
      const eta = rate && total !== null && total >= bytes ? Math.ceil((total - bytes) / rate) : null;
      return { bytes, total, bytesPerSecond: rate, etaSeconds: eta, since: new Date(since).toISOString() };
    },
  };
}
