/**
 * The instance statechart's vocabulary: the named actors (placeholders the supervisor replaces with
 * `.provide()`), delays computed from context, guards and actions. The states live in `instance.ts`.
 */
import {
  and,
  assign,
  emit,
  enqueueActions,
  fromCallback,
  fromPromise,
  type GuardPredicate,
  not,
  or,
  setup,
  stateIn,
} from 'xstate';
import {
  alertOf,
  backoffMs,
  blockedBackoffMs,
  classifyExit,
  exitOf,
  firstHang,
  givesUp,
  type InstanceContext,
  type InstanceMachineEvent,
  inLoop,
  unaskedRelaunch,
  want,
} from './instance.context.ts';
import {
  beginPending,
  endHold,
  holdFor,
  kindOf,
  type RestoreStep,
  restored,
  restoreStep,
  untilDeadline,
  untilHoldEnds,
} from './instance.maintenance-plan.ts';
import type { BusyTag } from './instance.refusals.ts';
import type {
  CheckInput,
  CheckOutput,
  InstanceEmitted,
  InstanceInput,
  MaintenanceOutcome,
  PlayersInput,
  ProcessCommand,
  ProcessInput,
  RestoreInput,
  RestoreOutput,
  RollbackInput,
  RollbackOutput,
  ScheduleCommand,
  UpdateInput,
  UpdateOutput,
} from './instance.types.ts';

/** Who asked for a STOP; '' when unknown. */
const stopByOf = (event: InstanceMachineEvent): string => (event.type === 'STOP' ? (event.by ?? '') : '');

const notProvided = (name: string) => () => {
  throw new Error(`instance machine: actor "${name}" not provided; supply it with instanceMachine.provide({ actors })`);
};

/** `stateIn` as `check` in an action takes it (its guard-name type parameter is `any`, check's `never`). */
const inState = (id: string) =>
  stateIn(id) as unknown as GuardPredicate<InstanceContext, InstanceMachineEvent, undefined, never>;

export const instanceSetup = setup({
  types: {
    context: {} as InstanceContext,
    events: {} as InstanceMachineEvent,
    input: {} as InstanceInput,
    emitted: {} as InstanceEmitted,
    tags: {} as 'busy' | BusyTag,
  },
  actors: {
    update: fromPromise<UpdateOutput, UpdateInput>(notProvided('update')),
    checkUpdate: fromPromise<CheckOutput, CheckInput>(notProvided('checkUpdate')),
    rollback: fromPromise<RollbackOutput, RollbackInput>(notProvided('rollback')),
    restore: fromPromise<RestoreOutput, RestoreInput>(notProvided('restore')),
    runProcess: fromCallback<ProcessCommand, ProcessInput>(notProvided('runProcess')),
    /** `When: Empty`: the server's player count (null: it gave none). */
    readPlayers: fromPromise<number | null, PlayersInput>(notProvided('readPlayers')),
    /**
     * `RestartSchedule` and `UpdateSchedule`: sends MAINTAIN {source: 'schedule'} and UPDATE_CHECK as they fire.
     * Without one provided nothing is scheduled.
     */
    maintenanceSchedule: fromCallback<ScheduleCommand, PlayersInput>(() => undefined),
  },
  delays: {
    checkinTimeout: ({ context }) => context.timing.checkinTimeoutMs,
    degradedAfter: ({ context }) => Math.floor(context.timing.checkinTimeoutMs / 2),
    hangAfter: ({ context }) => context.timing.checkinTimeoutMs - Math.floor(context.timing.checkinTimeoutMs / 2),
    backoff: ({ context }) => backoffMs(context.timing, context.crashStreak),
    blockedBackoff: ({ context }) => blockedBackoffMs(context.timing, context.blocked?.attempts ?? 1),
    stableRun: ({ context }) => context.timing.stableRunMs,
    maintenanceDeadline: ({ context }) => untilDeadline(context.maintenance),
    holdEnds: ({ context }) => untilHoldEnds(context.maintenance),
    playerPoll: ({ context }) => context.maintenance.rules.pollMs,
  },
  guards: {
    currentLaunch: ({ context, event }) => 'launchId' in event && event.launchId === context.launchId,
    /** A check-in of the current launch while the server is wanted (not while it is being stopped). */
    checkinCounts: and(['currentLaunch', not(stateIn('#instance.lifecycle.server.stopping'))]),
    graceful: ({ event }) => event.type === 'SHUTDOWN' && !event.persist,
    updatePending: ({ context }) => context.updatePending,
    shuttingDown: ({ context }) => context.exitIntent === 'shutdown',
    stopRequested: ({ context }) => context.exitIntent === 'stop',
    rollbackRequested: ({ context }) => context.exitIntent === 'rollback',
    restoreRequested: ({ context }) => context.exitIntent === 'restore',
    /**
     * An install runs, or is about to (`decide` may enter `updating`; a failing server relaunches for a found build):
     * a check asked for meanwhile waits for it, so it looks from the revision installed and never beside the install.
     */
    installAhead: or([
      stateIn('#instance.lifecycle.updating'),
      stateIn('#instance.lifecycle.decide'),
      and([stateIn('#instance.lifecycle.stopped.failing'), 'updatePending']),
    ]),
    /** Another update check was asked for while this one ran: it runs next. */
    askedAgain: stateIn('#instance.updateCheck.running.again'),
    /** `decide` was entered because the launch was blocked (PROCESS_BLOCKED): no server ran, so nothing counts. */
    launchBlocked: ({ event }) => event.type === 'PROCESS_BLOCKED',
    /** The startup-failure limit is reached and no pending update could still change the outcome. */
    giveUp: ({ context }) => context.exitIntent === 'crash' && givesUp(context),
    /** The second unclean exit or hang kill after check-ins without a stable run between them, or a later one. */
    crashLoop: ({ context }) => inLoop(context),
    /** A server is wanted and there (starting, running, awaiting a check-in): there is something to restart. */
    serverLive: and([stateIn('#instance.lifecycle.server'), not(stateIn('#instance.lifecycle.server.stopping'))]),
    serverThere: stateIn('#instance.lifecycle.server'),
    held: stateIn('#instance.maintenance.hold.held'),
    /** The pending action waits for the hold to end: a person's request (`?when=`) never does. */
    waitsForHold: and(['held', ({ context }) => context.maintenance.pending?.source !== 'request']),
    policyNow: ({ context }) => context.maintenance.pending?.when === 'Now',
    policyEmpty: ({ context }) => context.maintenance.pending?.when === 'Empty',
    pendingUpdate: ({ context }) => context.maintenance.pending?.action === 'update',
    /** A pending update was installed: a server launched after `updating` (which spends `updatePending`). */
    updateInstalled: and(['pendingUpdate', not('updatePending'), stateIn('#instance.lifecycle.server')]),
    requested: ({ event }) => event.type === 'MAINTAIN' && event.source === 'request',
    /** A build found by a check asked with `?when=`: it replaces what is pending, as a person's request does. */
    updateRequested: ({ event }) => event.type === 'UPDATE_FOUND' && event.when !== null,
    noPlayers: (_, players: number | null) => players === 0,
    /**
     * A pending update waits: a server that crashes during a hold comes back on the installed build and the update
     * stays pending until the hold ends (crash handling is never held, the install it would bring is).
     */
    installHeld: and([({ context }) => unaskedRelaunch(context), 'held']),
    /** What a RESTORE_MAINTENANCE brings back: how far the saved pending action got, and whether it outlives the restart. */
    restores: ({ event }, step: RestoreStep) =>
      event.type === 'RESTORE_MAINTENANCE' && restoreStep(event.saved, event.adopted) === step,
    restoresHold: ({ event }) => event.type === 'RESTORE_MAINTENANCE' && event.saved.hold !== null,
  },
  actions: {
    /** Every ProcessCommand goes through here: one for a process that is not owned is dropped, never thrown. */
    tell: enqueueActions(({ enqueue, check }, command: ProcessCommand) => {
      if (check(inState('#instance.lifecycle.server'))) enqueue.sendTo('process', command);
    }),
    /** START, RESTART, ROLLBACK and RESTORE of an instance without a server clear what kept it down. */
    clearDown: assign({ startupFailures: 0, crashStreak: 0, loopHangs: 0, exitIntent: null }),
    /** The same for a server that must go first; a shutdown already under way still wins. */
    requestRelaunch: assign(({ context }, intent: 'restart' | 'rollback' | 'restore') => ({
      startupFailures: 0,
      crashStreak: 0,
      loopHangs: 0,
      exitIntent: want(context.exitIntent, intent),
    })),
    /** STOP: remembered wherever a server is, or is about to be, running; a stopped instance is left as it is. */
    requestStop: enqueueActions(({ context, enqueue, event, check }) => {
      if (check(inState('#instance.lifecycle.stopped'))) return;
      enqueue.assign({ exitIntent: want(context.exitIntent, 'stop'), stopBy: stopByOf(event) });
      if (check(inState('#instance.lifecycle.server')))
        enqueue.sendTo('process', { type: 'LEAVE' } satisfies ProcessCommand);
    }),
    /** STOP with no server to end (between relaunches): the stop and who asked, nothing else. */
    recordStop: assign(({ event }) => ({ exitIntent: 'stop' as const, stopBy: stopByOf(event) })),
    requestShutdown: assign(({ context }) => ({ exitIntent: want(context.exitIntent, 'shutdown') })),
    /** Missed check-ins: the first hang of a loop is told and dumped, later ones only killed (`firstHang`). */
    killHung: enqueueActions(({ context, enqueue }) => {
      const first = firstHang(context);
      if (first) enqueue.emit(alertOf(context, 'hang'));
      enqueue.assign({ exitIntent: want(context.exitIntent, 'hang') });
      enqueue.sendTo('process', { type: 'KILL', reason: 'hang', dump: first } satisfies ProcessCommand);
    }),
    /** Entering `server`: a new launch id; an adopted server has checked in already (it ran under the last daemon). */
    beginLaunch: enqueueActions(({ enqueue, event }) => {
      const adopted = event.type === 'ADOPT';
      enqueue.assign({
        launchId: ({ context }) => context.launchId + 1,
        checkedIn: adopted,
        pid: adopted ? event.pid : null,
        secret: null,
      });
      enqueue.emit(({ context }) => ({ type: 'launch', launchId: context.launchId }));
      enqueue.raise({ type: 'LAUNCHED' });
    }),
    /**
     * Leaving `server` (the invoked process is stopped right after). With SHUTDOWN {persist} the server is told
     * to DETACH first, so the actor's cleanup leaves it running for the next daemon.
     */
    releaseServer: enqueueActions(({ enqueue, event }) => {
      if (event.type === 'SHUTDOWN' && event.persist)
        enqueue.sendTo('process', { type: 'DETACH' } satisfies ProcessCommand);
      enqueue.assign({ pid: null, secret: null });
      enqueue.cancel('stable');
    }),
    /** With a pid the spawn succeeded: a blocked-launch episode, if any, is over. */
    recordStart: enqueueActions(({ context, enqueue, event }) => {
      if (event.type !== 'PROCESS_STARTED') return;
      enqueue.assign({ secret: event.secret, pid: event.pid ?? context.pid });
      if (event.pid === null || context.blocked === null) return;
      enqueue.emit({ type: 'launch-unblocked', kind: context.blocked.kind, attempts: context.blocked.attempts });
      enqueue.assign({ blocked: null });
    }),
    /** PROCESS_BLOCKED: one more attempt of the episode; the server's counts are left alone. */
    recordBlock: assign(({ context, event }) =>
      event.type === 'PROCESS_BLOCKED'
        ? { blocked: { kind: event.kind, message: event.message, attempts: (context.blocked?.attempts ?? 0) + 1 } }
        : {},
    ),
    /** Entering `restarting.blocked`: says what blocked the launch and when it is tried again. */
    announceBlock: enqueueActions(({ context, enqueue }) => {
      const b = context.blocked;
      if (b === null) return;
      enqueue.emit({ type: 'launch-blocked', ...b, retryMs: blockedBackoffMs(context.timing, b.attempts) });
    }),
    recordCheckin: enqueueActions(({ context, enqueue }) => {
      if (!context.checkedIn) {
        enqueue.assign({ checkedIn: true, startupFailures: 0 });
        enqueue.raise({ type: 'STABLE' }, { delay: 'stableRun', id: 'stable' });
      }
      enqueue.emit({ type: 'checkin', launchId: context.launchId });
    }),
    /**
     * A run lasted stableRunMs after its first check-in. One whose check-in is overdue now may be hanging: it is not
     * stable yet, so the loop is not forgotten; it is asked again after another stableRunMs.
     */
    endLoopIfStable: enqueueActions(({ enqueue, check }) => {
      if (check(inState('#instance.lifecycle.server.running'))) enqueue.assign({ crashStreak: 0, loopHangs: 0 });
      else enqueue.raise({ type: 'STABLE' }, { delay: 'stableRun', id: 'stable' });
    }),
    /**
     * The current process exited: record how, count it and say why the instance restarts, once, here. An exit
     * nobody asked for becomes intent `crash`, which `decide` reads to give up or back off.
     */
    recordExit: enqueueActions(({ context, enqueue, event, check }) => {
      // Asked to leave at its round end for a restart (maintenance, `restart?when=RoundEnd`): a clean exit is that
      // restart, not an exit nobody asked for.
      const leftForRestart =
        check(inState('#instance.maintenance.action.pending.waiting.RoundEnd.asked')) &&
        context.maintenance.pending?.action === 'restart';
      const { context: next, emitted } = classifyExit(context, exitOf(event), leftForRestart);
      // A restore's server left at its round end: the restart it counts as puts the backup back first.
      const restore = leftForRestart && context.exitIntent === null ? context.maintenance.pending?.restore : undefined;
      enqueue.assign(
        restore && next.exitIntent === 'restart' ? { ...next, exitIntent: 'restore', restoreFrom: restore } : next,
      );
      for (const e of emitted) enqueue.emit(e);
      enqueue.raise({ type: 'SERVER_GONE' });
    }),
    /** A back-off ran out: `decide` is entered to retry a launch nobody asked for (`unaskedRelaunch`). */
    retry: assign({ retrying: true }),
    /** Leaving `decide` for a launch, an update, a back-off or giving up: the intent is spent. */
    spendIntent: assign({ exitIntent: null }),
    recordInstall: assign(({ context }, out: UpdateOutput) => ({
      revision: out.revision ?? context.revision,
      // A new build gets its own startup tries (the real watchdog resets its count the same way).
      startupFailures: out.changed ? 0 : context.startupFailures,
    })),
    reportUpdateFailure: emit((_, message: string) => ({ type: 'update-failed' as const, message })),
    noteRollback: assign({ rollbackWithData: ({ event }) => event.type === 'ROLLBACK' && event.withData === true }),
    noteRestore: assign({ restoreFrom: ({ event }) => (event.type === 'RESTORE' ? event.id : null) }),
    recordRollback: enqueueActions(({ context, enqueue }, out: RollbackOutput) => {
      enqueue.assign({ revision: out.revision, exitIntent: context.exitIntent === 'stop' ? 'stop' : null });
      enqueue.emit({ type: 'rolled-back', revision: out.revision });
    }),
    /** A failed rollback relaunches a server that was stopped for it, on the build still installed. */
    reportRollbackFailure: enqueueActions(({ context, enqueue }, message: string) => {
      if (context.exitIntent === 'rollback') enqueue.assign({ exitIntent: null });
      enqueue.emit({ type: 'rollback-failed', message });
    }),
    recordRestore: enqueueActions(({ context, enqueue }, out: RestoreOutput) => {
      enqueue.assign({ exitIntent: context.exitIntent === 'stop' ? 'stop' : null });
      enqueue.emit({ type: 'restored', id: context.restoreFrom ?? '', saved: out.saved });
    }),
    /** A failed restore relaunches a server that was stopped for it, on the data it had. */
    reportRestoreFailure: enqueueActions(({ context, enqueue }, message: string) => {
      if (context.exitIntent === 'restore') enqueue.assign({ exitIntent: null });
      enqueue.emit({ type: 'restore-failed', id: context.restoreFrom ?? '', message });
    }),
    /**
     * A found update is remembered (a later "none" never cancels it). When a running server leaves for it is the
     * daemon's maintenance policy's to say (When, holds): it asks the server or sends RESTART.
     */
    recordCheck: enqueueActions(({ context, enqueue }, { available, at }: CheckOutput) => {
      if (available) {
        enqueue.assign({ updatePending: true });
        enqueue.raise({ type: 'UPDATE_FOUND', when: context.maintenance.updateWhen, at });
      }
      // A policy asked with `update?when=` belongs to this check only.
      enqueue.assign({ maintenance: { ...context.maintenance, updateWhen: null } });
      enqueue.emit({ type: 'update-checked', available });
    }),
    reportCheckFailure: enqueueActions(({ context, enqueue }, message: string) => {
      enqueue.assign({ maintenance: { ...context.maintenance, updateWhen: null } });
      enqueue.emit({ type: 'check-failed', message });
    }),
    rememberUpdateWhen: assign(({ context, event }) =>
      event.type === 'UPDATE_CHECK' && event.when !== undefined
        ? { maintenance: { ...context.maintenance, updateWhen: event.when } }
        : {},
    ),
    /** A restart or update begins to wait for its moment; it is told once. */
    beginPending: enqueueActions(({ context, enqueue, event }) => {
      const m = context.maintenance;
      const next =
        event.type === 'MAINTAIN'
          ? beginPending(m, { action: 'restart', ...event })
          : event.type === 'UPDATE_FOUND'
            ? beginPending(m, {
                action: 'update',
                source: event.when === null ? 'update' : 'request',
                when: event.when,
                at: event.at,
              })
            : // A launch kept on the installed build by a hold: the found update waits from the hold's latest stamp.
              beginPending(m, { action: 'update', source: 'update', at: m.now });
      enqueue.assign({ maintenance: next });
      if (next.pending !== null)
        enqueue.emit({ type: 'maintenance-pending', pending: next.pending, kind: kindOf(next.pending) });
    }),
    /** The pending action ends (`done`, `forced`, `dropped` for one a person's request replaces). */
    finishPending: enqueueActions(({ context, enqueue }, how: MaintenanceOutcome) => {
      const p = context.maintenance.pending;
      if (p === null) return;
      enqueue.emit({ type: 'maintenance-done', kind: kindOf(p), how });
      enqueue.assign({ maintenance: { ...context.maintenance, pending: null } });
    }),
    /** RoundEnd: the server is told (POST /update) and leaves when its round ends; undeliverable, it is shut down. */
    askToLeave: enqueueActions(({ enqueue, check }) => {
      if (check(inState('#instance.lifecycle.server')))
        enqueue.sendTo('process', { type: 'LEAVE' } satisfies ProcessCommand);
      enqueue.emit({ type: 'maintenance-step', step: 'ask-leave', forced: false });
    }),
    /**
     * The moment (or the deadline) came: a graceful restart, when there is a server to restart; a restore's restart
     * is a RESTORE, which puts its backup back before the launch.
     */
    restartForMaintenance: enqueueActions(({ context, enqueue, check }, forced: boolean) => {
      if (!check(inState('#instance.lifecycle.server'))) return;
      enqueue.emit({ type: 'maintenance-step', step: 'restart', forced });
      const restore = context.maintenance.pending?.restore;
      enqueue.raise(restore ? { type: 'RESTORE', id: restore } : { type: 'RESTART' });
    }),
    /** A person's restart (or restore) with no server running: at once, there is no moment to wait for. */
    restartNow: enqueueActions(({ enqueue, event }) => {
      if (event.type !== 'MAINTAIN') return;
      enqueue.raise(event.restore ? { type: 'RESTORE', id: event.restore } : { type: 'RESTART' });
    }),
    recordHold: enqueueActions(({ context, enqueue, event }) => {
      if (event.type !== 'HOLD') return;
      const next = holdFor(context.maintenance, event);
      enqueue.assign({ maintenance: next });
      if (context.maintenance.hold === null && next.hold !== null)
        enqueue.emit({ type: 'hold-began', hold: next.hold });
    }),
    /** The hold ends: released at the event's time, or run out at its own end. */
    endHold: enqueueActions(({ context, enqueue, event }, how: 'released' | 'expired') => {
      const at =
        event.type === 'RELEASE_HOLD' ? event.at : (context.maintenance.hold?.until ?? context.maintenance.now);
      enqueue.assign({ maintenance: endHold(context.maintenance, at) });
      enqueue.emit({ type: 'maintenance-done', kind: 'hold', how });
    }),
    /** The previous daemon's plan: its hold, and its pending action when it outlives the restart. */
    restorePlan: assign(({ context, event }) =>
      event.type === 'RESTORE_MAINTENANCE'
        ? { maintenance: restored(context.maintenance, event.saved, event.adopted, event.at) }
        : {},
    ),
    /** A pending action the daemon's own restart carried out (it relaunched the server): told as done. */
    restoredDone: enqueueActions(({ enqueue, event }) => {
      if (event.type !== 'RESTORE_MAINTENANCE' || event.saved.pending === null) return;
      const p = { ...event.saved.pending };
      enqueue.emit({ type: 'maintenance-done', kind: kindOf(p), how: 'done' });
    }),
    /**
     * A failed runProcess actor is an exit with unknown status of the current launch. The error event names no
     * launch, so it counts only if the `process` child now held is the one that failed. (The graph traversal's
     * stand-in `self` holds no children; there the error counts.)
     */
    exitOnActorFailure: enqueueActions(({ context, self, enqueue }) => {
      const held = self.getSnapshot().children?.process;
      if (held !== undefined && held.getSnapshot().status !== 'error') return;
      enqueue.raise({ type: 'PROCESS_EXITED', launchId: context.launchId, code: null, signal: null });
    }),
  },
});
