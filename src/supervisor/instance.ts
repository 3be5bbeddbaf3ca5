import { type Actor, createActor } from 'xstate';
import { busyRefusal, CONTROL_EVENT, refusalOf } from '../../machines/instance.refusals.ts';
import { instanceMachine } from '../../machines/instance.ts';
import type { InstanceEmitted, LastExit } from '../../machines/instance.types.ts';
import type { BusEvents } from '../bus.ts';
import { consoleOf } from '../config/console-hub-schema.ts';
import { DEFAULT_FILE_FOLDERS } from '../config/files-schema.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import { alertMessage, formatDelay } from '../notify/messages.ts';
import { CONSOLE_FIFO, sendConsoleCommand } from '../process/console-fifo.ts';
import type { StopData } from '../store/instance-data.ts';
import { providerSettingsChanged } from '../updates/factory.ts';
import { hasPreviousBuild, removeDisplacedBuilds } from '../updates/install/install.ts';
import type { UpdateProvider } from '../updates/provider.ts';
import { type BackupHost, createBackupHost } from './backup-host.ts';
import { coalesceWindowMs, createCheckinCoalescer } from './checkin-coalescer.ts';
import type {
  ControlAction,
  ControlOptions,
  InstanceBackupsControl,
  InstanceControl,
  InstanceStatus,
} from './contract.ts';
import { createDownloadProgress } from './download-progress.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { maintenanceGuards, tellMaintenance } from './instance-maintenance.ts';
import { createInstanceResources } from './instance-resources.ts';
import type { Maintenance } from './maintenance.ts';
import { createMaintenance } from './maintenance-host.ts';
import { createProcessHost } from './process-host.ts';
import { createRunProcess } from './run-process.ts';
import { statePath } from './state-path.ts';
import { instanceTiming } from './timing.ts';
import { createCheckActor, createRollbackActor, createUpdateActor } from './update-actors.ts';
import { type CheckRecord, createCheckRecord } from './update-check-record.ts';

type InstanceActor = Actor<typeof instanceMachine>;

/** One supervised instance: its statechart actor, provided with real I/O, plus the view the HTTP layer reads. */
export class Instance implements InstanceControl {
  readonly key: string;
  readonly backups: InstanceBackupsControl;
  private deps: InstanceDeps;
  private actor: InstanceActor;
  private startedAt: number | null = null;
  private lastCheckinAt: number | null = null;
  private lastState: string | null = null;
  /** An operator's stop, kept in data.json so the instance stays stopped across daemon restarts. */
  private stopped: StopData | null;
  /** The machine's lastExit as last seen, and when it was first seen (the machine has no clock). */
  private lastExit: { exit: LastExit; at: number } | null = null;
  private checkins = createCheckinCoalescer(
    () => coalesceWindowMs(this.deps.instance.settings.TimeoutSeconds * 1000),
    (launchId) => this.actor.send({ type: 'CHECKIN', launchId }),
  );

  /** Scheduled restarts and update checks, policies and holds. */
  private maintenance: Maintenance;
  /** What the update checks found, or why they failed. */
  private checks: CheckRecord;
  /** The running update's download, from its progress events. */
  private download = createDownloadProgress();
  private readonly onUpdateProgress = (e: BusEvents['instance:update']): void => {
    if (e.key === this.key) this.download.seen(e);
  };
  /** CPU, memory and players of the running server, and MemoryLimitMB. */
  private resources: ReturnType<typeof createInstanceResources>;
  /** Snapshots of the instance's data: before installs, on a schedule, on request. */
  private backupHost: BackupHost;

  constructor(deps: InstanceDeps) {
    this.deps = deps;
    this.key = deps.instance.key;
    this.stopped = deps.savedStop ?? null;
    this.checks = createCheckRecord({
      key: this.key,
      bus: deps.bus,
      alertAfterMs: () => this.deps.config.timing.UpdateCheckAlertMinutes * 60_000,
    });
    deps.bus.on('instance:update', this.onUpdateProgress);
    this.resources = createInstanceResources(
      deps,
      () => {
        const pid = this.actor.getSnapshot().context.pid;
        return pid === null ? null : { pid, startedAt: this.startedAt };
      },
      (when, why) => this.maintenance.requestRestart(when, why),
      () => this.actor.getSnapshot().context.checkedIn,
    );
    this.backupHost = createBackupHost(
      deps,
      () => this.actor.getSnapshot().context.revision,
      () => this.actor.getSnapshot().context.pid !== null,
    );
    this.backups = this.backupHost.control;
    this.actor = this.createActor();
    this.maintenance = createMaintenance(deps, {
      live: () => {
        const snap = this.actor.getSnapshot();
        return snap.matches({ lifecycle: 'server' }) && !snap.matches({ lifecycle: { server: 'stopping' } });
      },
      secret: () => this.actor.getSnapshot().context.secret,
      send: (event) => this.actor.send(event),
    });
  }

  private createActor(): InstanceActor {
    const { deps } = this;
    const log = deps.log;
    const processHost = createProcessHost(
      deps,
      () => this.actor.getSnapshot().context.revision,
      (pid, cgroup) => this.resources.launched(pid, cgroup),
    );
    const machine = instanceMachine.provide({
      actors: {
        runProcess: createRunProcess(processHost),
        update: createUpdateActor(deps, (to) => this.backupHost.beforeInstall(to)),
        checkUpdate: createCheckActor(deps),
        rollback: createRollbackActor(() => deps.rollback()),
      },
      guards: maintenanceGuards(() => this.maintenance),
    });
    const actor = createActor(machine, {
      input: { key: this.key, timing: instanceTiming(deps.config, deps.instance), revision: deps.revision },
    });
    actor.on('*', (e) => this.onEmitted(e as InstanceEmitted));
    actor.subscribe({
      next: (snap) => {
        const exit = snap.context.lastExit;
        if (exit !== null && exit !== this.lastExit?.exit) this.lastExit = { exit, at: Date.now() };
        this.resources.pidSeen(snap.context.pid);
        const state = statePath(snap.value);
        if (state === this.lastState) return;
        deps.bus.emit('instance:state', { key: this.key, state, previous: this.lastState, at: Date.now() });
        log.info(`state ${state}`, { from: this.lastState ?? '(new)' });
        this.lastState = state;
      },
      // The machine turns every failure into an event; if it ever errors anyway, the instance must not die with it.
      error: (err) => {
        log.error('instance statechart crashed; starting a fresh one', { error: describeError(err) });
        this.actor = this.createActor();
        this.actor.start();
        this.actor.send({ type: 'START' });
      },
    });
    return actor;
  }

  private onEmitted(e: InstanceEmitted): void {
    const { bus, log } = this.deps;
    const at = Date.now();
    tellMaintenance(this.maintenance, e, this.actor.getSnapshot().context);
    switch (e.type) {
      case 'alert': {
        // An operator's stop is information, not an alert.
        const level = e.kind === 'stopped' ? 'info' : 'alert';
        const message = alertMessage(this.key, e, e.by);
        if (level === 'info') log.info(message);
        else log.warn(message);
        bus.emit('instance:alert', { key: this.key, kind: e.kind, level, message, exit: e.exit, at });
        break;
      }
      case 'restart':
        bus.emit('instance:restart', { key: this.key, reason: e.reason, at });
        break;
      case 'launch':
        this.checkins.reset();
        this.startedAt = at;
        this.lastCheckinAt = null;
        break;
      case 'checkin':
        this.lastCheckinAt = at;
        // The server is up: the build an update displaced may go now without slowing its start.
        removeDisplacedBuilds(this.deps.instance.dir);
        bus.emit('instance:checkin', { key: this.key, launchId: e.launchId, at });
        break;
      case 'update-failed':
        log.error('update failed; starting the installed build', { error: e.message });
        break;
      case 'check-failed':
        log.warn('update check failed', { error: e.message });
        this.checks.failed(e.message, at);
        this.download.end();
        break;
      case 'update-checked':
        this.checks.succeeded(e.available, at);
        this.download.end();
        break;
      case 'rolled-back':
        log.info('rolled back to the previous build', { revision: e.revision ?? '(unknown)' });
        break;
      case 'rollback-failed':
        log.error('rollback failed', { error: e.message });
        break;
      case 'launch-blocked':
        log.warn(`cannot launch: ${e.message}; retrying in ${formatDelay(e.retryMs)}`, { attempt: e.attempts });
        bus.emit('instance:launch-blocked', {
          key: this.key,
          kind: e.kind,
          message: e.message,
          attempts: e.attempts,
          retryMs: e.retryMs,
          at,
        });
        break;
      case 'launch-unblocked':
        log.info(`launched again after ${e.attempts} blocked attempt${e.attempts === 1 ? '' : 's'}`);
        bus.emit('instance:launch-unblocked', { key: this.key, kind: e.kind, attempts: e.attempts, at });
        break;
    }
  }

  /**
   * Starts the actor: adopt a live server from the previous daemon, or check for updates and launch. An instance an
   * operator stopped stays stopped (a server of it still running, a stop that had not finished, is stopped again).
   */
  start(adoptPid: number | null): void {
    this.actor.start();
    if (adoptPid !== null) this.actor.send({ type: 'ADOPT', pid: adoptPid });
    else if (this.stopped === null) this.actor.send({ type: 'START' });
    if (this.stopped !== null) {
      const { by, at } = this.stopped;
      this.deps.log.info(
        `stays stopped: stopped ${by ? `${by} ` : ''}at ${at}; \`watchdog start ${this.key}\` (or the dashboard's Start) starts it`,
      );
      if (adoptPid !== null) this.actor.send({ type: 'STOP', by });
    }
    this.maintenance.start(this.deps.savedMaintenance ?? null, adoptPid !== null);
    this.backupHost.start();
  }

  /** Daemon exit: resolves once the server is shut down (or detached) and the actor is stopped. */
  async shutdown(persist: boolean, timeoutMs: number): Promise<void> {
    this.deps.bus.off('instance:update', this.onUpdateProgress);
    this.maintenance.stop();
    this.resources.stop();
    void this.backupHost.stop();
    this.actor.send({ type: 'SHUTDOWN', persist });
    const done = await waitForExit(this.actor, timeoutMs);
    if (!done) this.deps.log.warn('server did not finish shutting down in time; killing it');
    this.checkins.reset();
    this.actor.stop();
  }

  /**
   * Config reload: new settings apply at the next launch; timings at the next timer. The update provider is made
   * anew (`makeProvider`) only when its settings changed.
   */
  reconfigure(config: ResolvedConfig, instance: ResolvedInstance, makeProvider: () => UpdateProvider | null): void {
    const provider = providerSettingsChanged(this.deps.instance, instance) ? makeProvider() : this.deps.provider;
    // In place: the process and update hosts made in createActor hold this very object.
    Object.assign(this.deps, { config, instance, provider });
    this.actor.send({ type: 'CONFIG', timing: instanceTiming(config, instance) });
    this.maintenance.reschedule();
    this.backupHost.reschedule();
  }

  apiToken(): string | undefined {
    return this.deps.instance.apiToken;
  }

  /** The current launch's check-in secret, as the machine holds it. */
  checkinSecret(): string | undefined {
    return this.actor.getSnapshot().context.secret ?? undefined;
  }

  /** Why `action` cannot be done now (the daemon answers 409 with it), or null when the machine takes it. */
  refusal(action: ControlAction): string | null {
    return refusalOf(this.actor.getSnapshot(), action, this.abilities());
  }

  /** Whether an update provider is configured, and a previous build (`bin.prev`) kept to go back to. */
  private abilities(): { canUpdate: boolean; canRollback: boolean } {
    return { canUpdate: this.deps.provider !== null, canRollback: hasPreviousBuild(this.deps.instance.dir) };
  }

  control(action: ControlAction, { when, by = '' }: ControlOptions = {}): void {
    const log = this.deps.log;
    // The HTTP layer asks `refusal` first and answers 409. What the machine cannot take is dropped here for every
    // caller; a missing provider or bin.prev is left to the actors, which say so in the log.
    const refused = busyRefusal(this.actor.getSnapshot(), action);
    if (refused !== null) {
      log.warn(`${action} refused: ${refused}`);
      return;
    }
    log.info(`control: ${action}${when === undefined ? '' : ` (when ${when})`}`);
    // A stop is remembered until someone starts the server again (a restart, or a rollback, which starts it).
    if (action === 'stop') {
      this.remember({ by, at: new Date().toISOString() });
    } else if (action === 'restart' || action === 'rollback') this.remember(null);
    if (action === 'restart' && when !== undefined) this.maintenance.requestRestart(when);
    else if (action === 'update' && when !== undefined) this.maintenance.requestUpdate(when);
    else if (action === 'stop') this.actor.send({ type: 'STOP', by });
    else this.actor.send(CONTROL_EVENT[action]);
  }

  private remember(stop: StopData | null): void {
    if (stop === null && this.stopped === null) return;
    this.stopped = stop;
    this.deps
      .recordStop?.(stop)
      .catch((err: unknown) =>
        this.deps.log.warn('could not record the stop in data.json', { error: describeError(err) }),
      );
  }

  hold(minutes: number, reason: string): void {
    this.maintenance.hold(minutes * 60_000, reason);
  }

  release(): boolean {
    return this.maintenance.release();
  }

  checkin(): void {
    const c = this.actor.getSnapshot().context;
    if (c.secret !== null) this.checkins.checkin(c.launchId);
  }

  consoleSettings(): { commandsPerMinute: number } | null {
    // Settings made without the parser (embedders, tests) may lack the key: off, as the parser's default.
    return consoleOf(this.deps.instance.settings.Console ?? false);
  }

  sendConsole(command: string): Promise<void> {
    return sendConsoleCommand(`${this.deps.instance.dir}/${CONSOLE_FIFO}`, command);
  }

  binariesDir(): string {
    return `${this.deps.instance.dir}/binaries`;
  }

  fileFolders(): readonly string[] {
    // Settings made without the parser may lack the key: the parser's default then.
    return this.deps.instance.settings.Files?.Folders ?? DEFAULT_FILE_FOLDERS;
  }

  status(): InstanceStatus {
    const snap = this.actor.getSnapshot();
    const c = snap.context;
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    const running = c.pid !== null && this.startedAt !== null;
    return {
      key: this.key,
      name: this.deps.instance.name,
      state: statePath(snap.value),
      pid: c.pid,
      revision: c.revision,
      lastCheckinAt: iso(this.lastCheckinAt),
      startedAt: running ? iso(this.startedAt) : null,
      uptimeSeconds: running && this.startedAt !== null ? Math.round((Date.now() - this.startedAt) / 1000) : null,
      startupFailures: c.startupFailures,
      restarts: c.restarts,
      crashStreak: c.crashStreak,
      updatePending: c.updatePending,
      stopRequested: c.exitIntent === 'stop',
      stoppedBy: this.stopped === null ? null : { ...this.stopped },
      // What the dashboard's buttons need.
      ...this.abilities(),
      checking: snap.matches({ updateCheck: 'queued' }) || snap.matches({ updateCheck: 'running' }),
      console: this.consoleSettings() !== null,
      ...(c.blocked === null ? {} : { launchBlocked: { ...c.blocked } }),
      lastExit: this.lastExit === null ? null : { ...this.lastExit.exit, at: new Date(this.lastExit.at).toISOString() },
      updateCheck: this.checks.status(),
      download: this.download.status(),
      maintenance: this.maintenance.status(),
      resources: this.resources.resources(c.pid),
      players: this.resources.players(c.pid),
      backup: this.backupHost.status(),
    };
  }
}

/** Resolves true once the server region has exited (the daemon's shutdown), false after `timeoutMs`. */
function waitForExit(actor: InstanceActor, timeoutMs: number): Promise<boolean> {
  const exited = (snap: ReturnType<InstanceActor['getSnapshot']>) => snap.matches({ lifecycle: 'exited' });
  return new Promise((resolve) => {
    if (exited(actor.getSnapshot())) return resolve(true);
    const timer = setTimeout(() => {
      sub.unsubscribe();
      resolve(false);
    }, timeoutMs);
    const sub = actor.subscribe((snap) => {
      if (exited(snap)) {
        clearTimeout(timer);
        sub.unsubscribe();
        resolve(true);
      }
    });
  });
}
