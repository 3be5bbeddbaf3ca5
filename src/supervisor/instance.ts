import {
  BUSY_REASONS,
  busyRefusal,
  CONTROL_ACTIONS,
  type ControlFacts,
  type ControlView,
  controlEvent,
  refusalOf,
} from '../../machines/instance.refusals.ts';
import { monotonicMs, stampNow } from '../clock.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import { consoleOf } from '../config/sections/console-hub.ts';
import { DEFAULT_FILE_FOLDERS } from '../config/sections/files.ts';
import { describeError } from '../errors.ts';
import { CONSOLE_FIFO, sendConsoleCommand } from '../process/console-fifo.ts';
import { providerSettingsChanged } from '../updates/factory.ts';
import { hasPreviousBuild } from '../updates/install/install.ts';
import type { UpdateProvider } from '../updates/provider.ts';
import { createBackupHost } from './backup-host.ts';
import type { ControlAction, ControlOptions } from './contract.ts';
import { createChart, instanceTiming, maintenanceRules, operatorStop, statePath } from './instance-chart.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { createInstanceResources } from './instance-resources.ts';
import { createPlanKeeper, maintenanceStatus } from './maintenance/plan.ts';
import { createMaintenanceSchedule, createScheduledCommands } from './maintenance/schedule.ts';
import type { ControlChoice, InstanceStatus } from './status.ts';
import { createCheckRecord } from './update-actors.ts';

/** One supervised instance: its statechart and the parts around it, behind `InstanceControl`. */
export function createInstance(deps: InstanceDeps) {
  const { key } = deps.instance;
  const { bus, log } = deps;
  const snapshot = () => chart.snapshot();
  const checks = createCheckRecord({
    key,
    bus,
    alertAfterMs: () => deps.config.timing.UpdateCheckAlertMinutes * 60_000,
  });
  const resources = createInstanceResources(
    deps,
    () => {
      const pid = snapshot().context.pid;
      return pid === null ? null : { pid, startedMs: chart.times.startedMs };
    },
    (when, reason) => chart.send({ type: 'MAINTAIN', source: 'request', when, reason, at: stampNow() }),
    () => snapshot().context.checkedIn,
  );
  const backupHost = createBackupHost(deps, {
    revision: () => snapshot().context.revision,
    previousRevision: () => deps.previousRevision?.() ?? null,
    serverRunning: () => snapshot().context.pid !== null,
    pendingRestore: () => snapshot().context.maintenance.pending?.restore ?? null,
  });
  const held = () => snapshot().matches({ maintenance: { hold: 'held' } });
  const scheduledCommands = createScheduledCommands({
    settings: () => deps.instance.settings.Maintenance,
    send: (command, why) => sendScheduled(command, why),
    held,
    broken: (why, err) =>
      log.error('cannot compute when to send a scheduled console command', { why, error: describeError(err) }),
  });
  const schedule = createMaintenanceSchedule({
    settings: () => deps.instance.settings.Maintenance,
    canCheck: () => deps.provider !== null,
    log: log.child('maintenance'),
  });
  const plan = createPlanKeeper((saved) => deps.recordMaintenance?.(saved) ?? Promise.resolve());
  const chart = createChart({ deps, resources, backupHost, schedule, plan, checks });

  /** A scheduled console command: audited as user `schedule`; one that cannot be sent is told, not retried. */
  function sendScheduled(command: string, why: string): void {
    const audit = (status: number, reason?: string) =>
      bus.emit('instance:control', {
        key,
        action: 'console',
        user: 'schedule',
        remote: undefined,
        status,
        result: status === 200 ? 'accepted' : 'refused',
        ...(reason ? { reason } : {}),
        command,
        at: Date.now(),
      });
    sendConsole(command).then(
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

  const sendConsole = (command: string): Promise<void> =>
    sendConsoleCommand(`${deps.instance.dir}/${CONSOLE_FIFO}`, command);
  // Settings made without the parser (embedders, tests) may lack the key: off, as the parser's default.
  const consoleSettings = (): { commandsPerMinute: number } | null =>
    consoleOf(deps.instance.settings.Console ?? false);

  // Whether bin.prev holds a build: read again once the state changed (an update or a rollback moves it) or a second
  // has passed, not for every status (asked for by every request, /health's by anyone): a flood of requests must
  // not turn into a flood of synchronous folder reads.
  let previous: { state: string; atMs: number; kept: boolean } | null = null;
  const abilities = (state: string) => {
    if (previous === null || previous.state !== state || monotonicMs() - previous.atMs >= 1_000)
      previous = { state, atMs: monotonicMs(), kept: hasPreviousBuild(deps.instance.dir) };
    return {
      canUpdate: deps.provider !== null,
      canRollback: previous.kept,
      ...(deps.provider ? { updateType: deps.provider.type } : {}),
    };
  };

  return {
    key,
    backups: backupHost.control,

    /** Adopts the previous daemon's server, or checks for updates and launches; a remembered stop stops it again. */
    start(adoptPid: number | null): void {
      chart.start();
      chart.send(adoptPid === null ? { type: 'START' } : { type: 'ADOPT', pid: adoptPid });
      const stop = deps.savedStop ?? null;
      if (stop !== null) {
        log.info(
          `stays stopped: stopped ${stop.by ? `${stop.by} ` : ''}at ${stop.at}; \`watchdog start ${key}\` (or the dashboard's Start) starts it`,
        );
        if (adoptPid !== null) chart.send({ type: 'STOP', ...stop });
      }
      // The previous daemon's plan: its hold stays; its pending action only with the server it was for.
      const saved = deps.savedMaintenance ?? null;
      if (saved) chart.send({ type: 'RESTORE_MAINTENANCE', saved, adopted: adoptPid !== null, at: stampNow() });
      plan.start(saved, snapshot());
      backupHost.start();
      scheduledCommands.start();
    },

    /** Resolves once the server is shut down (or detached) and the actor is stopped. */
    async shutdown(persist: boolean, timeoutMs: number): Promise<void> {
      resources.stop();
      scheduledCommands.stop();
      // A snapshot or restore under way finishes first: one cut off between its renames would strand the data.
      const backups = backupHost.stop();
      chart.send({ type: 'SHUTDOWN', persist });
      if (!(await chart.exited(timeoutMs))) log.warn('server did not finish shutting down in time; killing it');
      chart.stop();
      await backups;
    },

    /** Config reload: new settings apply at the next launch, timings at the next timer. */
    reconfigure(config: ResolvedConfig, instance: ResolvedInstance, makeProvider: () => UpdateProvider | null): void {
      const provider = providerSettingsChanged(deps.instance, instance) ? makeProvider() : deps.provider;
      // In place: the process and update hosts the chart was given hold this very object.
      Object.assign(deps, { config, instance, provider });
      chart.send({ type: 'CONFIG', timing: instanceTiming(config, instance), maintenance: maintenanceRules(deps) });
      backupHost.reschedule();
      scheduledCommands.start();
    },

    apiToken: (): string | undefined => deps.instance.apiToken,

    checkinSecret: (): string | undefined => snapshot().context.secret ?? undefined,

    refusal: (action: ControlAction): string | null => {
      const snap = snapshot();
      return refusalOf(snap, action, abilities(statePath(snap.value)));
    },

    control(action: ControlAction, { when, by = '', withData, snapshot: id }: ControlOptions = {}): void {
      // HTTP asked `refusal` first (409); for other callers this drops what the machine cannot take. A missing
      // provider or bin.prev is left to the actors, which log it.
      const refused = busyRefusal(snapshot(), action);
      if (refused !== null) {
        log.warn(`${action} refused: ${refused}`);
        return;
      }
      const what = [when && `when ${when}`, withData && 'with data', id && `backup ${id}`].filter(Boolean);
      log.info(`control: ${action}${what.length === 0 ? '' : ` (${what.join(', ')})`}`);
      // The chart keeps an operator's stop until a restart, rollback or restore; data.json follows it.
      const before = operatorStop(snapshot());
      chart.send(controlEvent(action, { when, by, withData, snapshot: id, at: stampNow() }));
      const after = operatorStop(snapshot());
      if (before?.by !== after?.by || before?.at !== after?.at) void deps.recordStop?.(after);
    },

    hold(minutes: number, reason: string): string | null {
      // A chart that is done (the daemon exiting) would drop the hold: refused as its control actions are.
      if (snapshot().status !== 'active') return BUSY_REASONS['shutting-down'];
      chart.send({ type: 'HOLD', ms: minutes * 60_000, reason, at: stampNow() });
      return null;
    },

    release(): boolean {
      if (!held()) return false;
      chart.send({ type: 'RELEASE_HOLD', at: stampNow() });
      return true;
    },

    checkin(): void {
      const c = snapshot().context;
      if (c.secret !== null) chart.send({ type: 'CHECKIN', launchId: c.launchId });
    },

    consoleSettings,
    sendConsole,
    binariesDir: (): string => `${deps.instance.dir}/binaries`,
    // Settings made without the parser may lack the key: the parser's default then.
    fileFolders: (): readonly string[] => deps.instance.settings.Files?.Folders ?? DEFAULT_FILE_FOLDERS,

    currentState: (): string => statePath(snapshot().value),

    status(): InstanceStatus {
      const snap = snapshot();
      const c = snap.context;
      const { startedAt, startedMs, lastCheckinAt, lastCheckinMs, lastExit } = chart.times;
      const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
      const running = c.pid !== null && startedAt !== null && startedMs !== null;
      const state = statePath(snap.value);
      const can = abilities(state);
      return {
        key,
        name: deps.instance.name,
        state,
        pid: c.pid,
        revision: c.revision,
        lastCheckinAt: iso(lastCheckinAt),
        secondsSinceCheckin: lastCheckinMs === null ? null : Math.round((monotonicMs() - lastCheckinMs) / 1000),
        startedAt: running ? iso(startedAt) : null,
        uptimeSeconds: running ? Math.round((monotonicMs() - startedMs) / 1000) : null,
        startupFailures: c.startupFailures,
        restarts: c.restarts,
        crashStreak: c.crashStreak,
        updatePending: c.updatePending,
        stopRequested: c.exitIntent === 'stop',
        stoppedBy: operatorStop(snap),
        // What the dashboard's buttons need: the control routes' own answers.
        ...can,
        controls: controlChoices(snap, can),
        checking: snap.matches({ updateCheck: 'queued' }) || snap.matches({ updateCheck: 'running' }),
        console: consoleSettings() !== null,
        ...(c.blocked === null ? {} : { launchBlocked: { ...c.blocked } }),
        lastExit: lastExit === null ? null : { ...lastExit.exit, at: new Date(lastExit.at).toISOString() },
        updateCheck: checks.status(),
        download: chart.download(),
        maintenance: maintenanceStatus(
          snap,
          monotonicMs(),
          { policy: maintenanceRules(deps).when, ...schedule.next() },
          deps.provider?.staged?.() ?? null,
        ),
        resources: resources.resources(c.pid),
        players: resources.players(c.pid),
        backup: backupHost.status(),
        restore: backupHost.restoreStatus(),
        ...deps.statusExtras?.(key),
      };
    },
  };
}

export type Instance = ReturnType<typeof createInstance>;

/** The status's `controls`: what `refusalOf` says of each action now. */
export function controlChoices(snapshot: ControlView, facts: ControlFacts): Record<ControlAction, ControlChoice> {
  const choiceOf = (reason: string | null): ControlChoice => ({ allowed: reason === null, reason });
  const choices = CONTROL_ACTIONS.map((a) => [a, choiceOf(refusalOf(snapshot, a, facts))]);
  return Object.fromEntries(choices) as Record<ControlAction, ControlChoice>;
}
