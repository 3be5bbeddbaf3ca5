import { type Actor, createActor } from 'xstate';
import { busyRefusal, controlEvent, refusalOf } from '../../machines/instance.refusals.ts';
import { instanceMachine } from '../../machines/instance.ts';
import type { InstanceEmitted, LastExit, MaintenancePolicy, MaintenanceRules } from '../../machines/instance.types.ts';
import type { BusEvents } from '../bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { consoleOf } from '../config/sections/console-hub.ts';
import { DEFAULT_FILE_FOLDERS } from '../config/sections/files.ts';
import { describeError } from '../errors.ts';
import { alertMessage, formatDelay } from '../notify/messages.ts';
import { CONSOLE_FIFO, sendConsoleCommand } from '../process/console-fifo.ts';
import type { StopData } from '../store/instance-data.ts';
import { providerSettingsChanged } from '../updates/factory.ts';
import { hasPreviousBuild, removeDisplacedBuilds } from '../updates/install/install.ts';
import type { UpdateProvider } from '../updates/provider.ts';
import { type BackupHost, createBackupHost } from './backup-host.ts';
import type { ControlAction, ControlOptions, InstanceBackupsControl, InstanceControl } from './contract.ts';
import { controlChoices } from './control-choices.ts';
import { createDownloadProgress } from './download-progress.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { createInstanceResources } from './instance-resources.ts';
import { announce, isMaintenanceFact } from './maintenance/announce.ts';
import { createScheduledCommands, type ScheduledCommands } from './maintenance/console-commands.ts';
import { createPlanKeeper, maintenanceStatus } from './maintenance/plan.ts';
import { createPlayersActor } from './maintenance/players.ts';
import { createMaintenanceSchedule, type MaintenanceSchedule } from './maintenance/schedule.ts';
import { createProcessHost } from './process-host.ts';
import { createRunProcess } from './run-process.ts';
import { statePath } from './state-path.ts';
import type { InstanceStatus } from './status.ts';
import { instanceTiming } from './timing.ts';
import { createCheckActor, createRestoreActor, createRollbackActor, createUpdateActor } from './update-actors.ts';
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
  /** The machine's lastExit as last seen, and when it was first seen (the machine has no clock). */
  private lastExit: { exit: LastExit; at: number } | null = null;

  /** When `RestartSchedule` and `UpdateSchedule` fire next (the `maintenanceSchedule` actor keeps it). */
  private schedule: MaintenanceSchedule;
  /** Keeps the maintenance region's plan (pending action, hold) in data.json as it changes. */
  private plan: ReturnType<typeof createPlanKeeper>;
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
  private readonly scheduledCommands: ScheduledCommands;

  constructor(deps: InstanceDeps) {
    this.deps = deps;
    this.key = deps.instance.key;
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
      (when, why) => this.maintain(when, why),
      () => this.actor.getSnapshot().context.checkedIn,
    );
    this.backupHost = createBackupHost(deps, {
      revision: () => this.actor.getSnapshot().context.revision,
      previousRevision: () => deps.previousRevision?.() ?? null,
      serverRunning: () => this.actor.getSnapshot().context.pid !== null,
      pendingRestore: () => this.actor.getSnapshot().context.maintenance.pending?.restore ?? null,
    });
    this.backups = this.backupHost.control;
    this.scheduledCommands = createScheduledCommands({
      settings: () => this.deps.instance.settings.Maintenance,
      send: (command, why) => this.sendScheduled(command, why),
      held: () => this.actor.getSnapshot().matches({ maintenance: { hold: 'held' } }),
      broken: (why, err) =>
        deps.log.error('cannot compute when to send a scheduled console command', { why, error: describeError(err) }),
    });
    this.schedule = createMaintenanceSchedule({
      settings: () => this.deps.instance.settings.Maintenance,
      canCheck: () => this.deps.provider !== null,
      log: deps.log.child('maintenance'),
    });
    this.plan = createPlanKeeper(
      (plan) => this.deps.recordMaintenance?.(plan) ?? Promise.resolve(),
      deps.log.child('maintenance'),
    );
    this.actor = this.createActor();
  }

  /** `Maintenance.When`, `MaxDelayMinutes` and the player poll, as the machine takes them. */
  private maintenanceRules(): MaintenanceRules {
    const m = this.deps.instance.settings.Maintenance;
    return {
      when: m?.When ?? 'RoundEnd',
      maxDelayMs: (m?.MaxDelayMinutes ?? 120) * 60_000,
      pollMs: this.deps.config.timing.MaintenancePollSeconds * 1000,
    };
  }

  /** The daemon's own restart by `when` (or `Maintenance.When`); `reason` (a memory limit) goes with its notice. */
  private maintain(when: MaintenancePolicy | undefined, reason: string): void {
    this.actor.send({ type: 'MAINTAIN', source: 'request', ...(when ? { when } : {}), reason, at: Date.now() });
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
        rollback: createRollbackActor((withData) =>
          withData ? this.backupHost.rollBackWithData(() => deps.rollback()) : deps.rollback(),
        ),
        restore: createRestoreActor((id) => this.backupHost.restore(id)),
        readPlayers: createPlayersActor({
          apiPort: () => this.deps.instance.settings.ApiPort,
          pollMs: () => this.deps.config.timing.MaintenancePollSeconds * 1000,
        }),
        maintenanceSchedule: this.schedule.actor,
      },
    });
    const actor = createActor(machine, {
      input: {
        key: this.key,
        timing: instanceTiming(deps.config, deps.instance),
        revision: deps.revision,
        maintenance: this.maintenanceRules(),
        stop: deps.savedStop ?? null,
      },
    });
    actor.on('*', (e) => this.onEmitted(e as InstanceEmitted));
    actor.subscribe({
      next: (snap) => {
        const exit = snap.context.lastExit;
        if (exit !== null && exit !== this.lastExit?.exit) this.lastExit = { exit, at: Date.now() };
        this.resources.pidSeen(snap.context.pid);
        this.plan.seen(snap);
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
        // The hold outlives the fresh machine; a pending action is done by the relaunch, as at a daemon restart.
        const saved = this.plan.kept();
        if (saved) this.actor.send({ type: 'RESTORE_MAINTENANCE', saved, adopted: false, at: Date.now() });
      },
    });
    return actor;
  }

  private onEmitted(e: InstanceEmitted): void {
    const { bus, log } = this.deps;
    const at = Date.now();
    if (isMaintenanceFact(e)) {
      announce({ key: this.key, bus, log: log.child('maintenance') }, e, at);
      return;
    }
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
      case 'restored':
        log.info(`restored backup ${e.id}; the data it replaced is kept as backup ${e.saved}`);
        break;
      case 'restore-failed':
        log.error(`restoring backup ${e.id} failed`, { error: e.message });
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
   * Starts the actor: adopt a live server from the previous daemon, or check for updates and launch. The stop
   * data.json remembers is the machine's input: its `operatorStop` region stands from the first moment and takes no
   * START; an adopted server of it (a stop that had not finished) is stopped again.
   */
  start(adoptPid: number | null): void {
    this.actor.start();
    this.actor.send(adoptPid === null ? { type: 'START' } : { type: 'ADOPT', pid: adoptPid });
    const stop = this.deps.savedStop ?? null;
    if (stop !== null) {
      this.deps.log.info(
        `stays stopped: stopped ${stop.by ? `${stop.by} ` : ''}at ${stop.at}; \`watchdog start ${this.key}\` (or the dashboard's Start) starts it`,
      );
      if (adoptPid !== null) this.actor.send({ type: 'STOP', ...stop });
    }
    // The previous daemon's plan: its hold stays; its pending action only with the server it was for.
    const saved = this.deps.savedMaintenance ?? null;
    if (saved) this.actor.send({ type: 'RESTORE_MAINTENANCE', saved, adopted: adoptPid !== null, at: Date.now() });
    this.plan.start(saved, this.actor.getSnapshot());
    this.backupHost.start();
    this.scheduledCommands.start();
  }

  /**
   * A console command a maintenance schedule sends: audited like one sent through the API (user `schedule`), and
   * logged; one that cannot be sent (no server running, its input full) is told, not retried.
   */
  private sendScheduled(command: string, why: string): void {
    const log = this.deps.log;
    const audit = (status: number, reason?: string) =>
      this.deps.bus.emit('instance:control', {
        key: this.key,
        action: 'console',
        user: 'schedule',
        remote: undefined,
        status,
        result: status === 200 ? 'accepted' : 'refused',
        ...(reason ? { reason } : {}),
        command,
        at: Date.now(),
      });
    this.sendConsole(command).then(
      () => {
        log.info(`console command sent by the ${why}`);
        audit(200);
      },
      (err: unknown) => {
        log.warn(`console command of the ${why} not sent: ${describeError(err)}`);
        audit(409, describeError(err));
      },
    );
  }

  /** Daemon exit: resolves once the server is shut down (or detached) and the actor is stopped. */
  async shutdown(persist: boolean, timeoutMs: number): Promise<void> {
    this.deps.bus.off('instance:update', this.onUpdateProgress);
    this.resources.stop();
    // A snapshot or restore under way finishes first: one cut off between its renames would strand the data.
    this.scheduledCommands.stop();
    const backups = this.backupHost.stop();
    this.actor.send({ type: 'SHUTDOWN', persist });
    const done = await waitForExit(this.actor, timeoutMs);
    if (!done) this.deps.log.warn('server did not finish shutting down in time; killing it');
    this.actor.stop();
    await backups;
  }

  /**
   * Config reload: new settings apply at the next launch; timings at the next timer. The update provider is made
   * anew (`makeProvider`) only when its settings changed.
   */
  reconfigure(config: ResolvedConfig, instance: ResolvedInstance, makeProvider: () => UpdateProvider | null): void {
    const provider = providerSettingsChanged(this.deps.instance, instance) ? makeProvider() : this.deps.provider;
    // In place: the process and update hosts made in createActor hold this very object.
    Object.assign(this.deps, { config, instance, provider });
    this.actor.send({ type: 'CONFIG', timing: instanceTiming(config, instance), maintenance: this.maintenanceRules() });
    this.backupHost.reschedule();
    this.scheduledCommands.reschedule();
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

  control(action: ControlAction, { when, by = '', withData, snapshot }: ControlOptions = {}): void {
    const log = this.deps.log;
    // The HTTP layer asks `refusal` first and answers 409. What the machine cannot take is dropped here for every
    // caller; a missing provider or bin.prev is left to the actors, which say so in the log.
    const refused = busyRefusal(this.actor.getSnapshot(), action);
    if (refused !== null) {
      log.warn(`${action} refused: ${refused}`);
      return;
    }
    const what = [when && `when ${when}`, withData && 'with data', snapshot && `backup ${snapshot}`].filter(Boolean);
    log.info(`control: ${action}${what.length === 0 ? '' : ` (${what.join(', ')})`}`);
    // The chart keeps an operator's stop until a restart, rollback or restore; data.json follows it.
    const before = operatorStop(this.actor.getSnapshot());
    this.actor.send(controlEvent(action, { when, by, withData, snapshot, now: Date.now() }));
    const after = operatorStop(this.actor.getSnapshot());
    if (before?.by !== after?.by || before?.at !== after?.at) this.recordStop(after);
  }

  private recordStop(stop: StopData | null): void {
    this.deps
      .recordStop?.(stop)
      .catch((err: unknown) =>
        this.deps.log.warn('could not record the stop in data.json', { error: describeError(err) }),
      );
  }

  hold(minutes: number, reason: string): void {
    this.actor.send({ type: 'HOLD', ms: minutes * 60_000, reason, at: Date.now() });
  }

  /** Ends a hold; false when there was none. */
  release(): boolean {
    if (!this.actor.getSnapshot().matches({ maintenance: { hold: 'held' } })) return false;
    this.actor.send({ type: 'RELEASE_HOLD', at: Date.now() });
    return true;
  }

  /**
   * Straight to the chart, one event per check-in: its hang deadline is an `after` delay, a timer on Node's
   * monotonic clock, so a step of the wall clock can neither hold a check-in back nor declare a hang.
   */
  checkin(): void {
    const c = this.actor.getSnapshot().context;
    if (c.secret !== null) this.actor.send({ type: 'CHECKIN', launchId: c.launchId });
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
    const abilities = this.abilities();
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
      stoppedBy: operatorStop(snap),
      // What the dashboard's buttons need: the control routes' own answers.
      ...abilities,
      controls: controlChoices(snap, abilities),
      checking: snap.matches({ updateCheck: 'queued' }) || snap.matches({ updateCheck: 'running' }),
      console: this.consoleSettings() !== null,
      ...(c.blocked === null ? {} : { launchBlocked: { ...c.blocked } }),
      lastExit: this.lastExit === null ? null : { ...this.lastExit.exit, at: new Date(this.lastExit.at).toISOString() },
      updateCheck: this.checks.status(),
      download: this.download.status(),
      maintenance: maintenanceStatus(
        snap,
        Date.now(),
        { policy: this.maintenanceRules().when, ...this.schedule.next() },
        this.deps.provider?.staged?.() ?? null,
      ),
      resources: this.resources.resources(c.pid),
      players: this.resources.players(c.pid),
      backup: this.backupHost.status(),
      restore: this.backupHost.restoreStatus(),
      ...this.deps.statusExtras?.(this.key),
    };
  }
}

/** Resolves true once the server region has exited (the daemon's shutdown), false after `timeoutMs`. */
/** The operator's stop as the chart holds it (the `operatorStop` region): who and when, or null. */
function operatorStop(snap: ReturnType<InstanceActor['getSnapshot']>): StopData | null {
  return snap.matches({ operatorStop: 'stopped' }) ? { ...snap.context.stop } : null;
}

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
