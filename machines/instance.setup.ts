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
  want,
} from './instance.context.ts';
import type { BusyTag } from './instance.refusals.ts';
import type {
  CheckInput,
  CheckOutput,
  InstanceEmitted,
  InstanceInput,
  ProcessCommand,
  ProcessInput,
  RestoreInput,
  RestoreOutput,
  RollbackInput,
  RollbackOutput,
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
  },
  delays: {
    checkinTimeout: ({ context }) => context.timing.checkinTimeoutMs,
    degradedAfter: ({ context }) => Math.floor(context.timing.checkinTimeoutMs / 2),
    hangAfter: ({ context }) => context.timing.checkinTimeoutMs - Math.floor(context.timing.checkinTimeoutMs / 2),
    backoff: ({ context }) => backoffMs(context.timing, context.crashStreak),
    blockedBackoff: ({ context }) => blockedBackoffMs(context.timing, context.blocked?.attempts ?? 1),
    stableRun: ({ context }) => context.timing.stableRunMs,
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
    /**
     * The server was asked to leave at its round end for a restart (maintenance, `POST /update`): its clean exit is
     * that restart, not an exit nobody asked for. The daemon provides it from its maintenance plan.
     */
    leftForRestart: () => false,
    /**
     * A pending update waits: the daemon provides `unaskedRelaunch` while a maintenance hold stands, so a server that
     * crashes during a hold comes back on the installed build and the update stays pending until the hold ends.
     */
    installHeld: () => false,
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
      const { context: next, emitted } = classifyExit(context, exitOf(event), check({ type: 'leftForRestart' }));
      enqueue.assign(next);
      for (const e of emitted) enqueue.emit(e);
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
    recordCheck: enqueueActions(({ enqueue }, { available }: CheckOutput) => {
      if (available) {
        enqueue.assign({ updatePending: true });
        enqueue.raise({ type: 'UPDATE_FOUND' });
      }
      enqueue.emit({ type: 'update-checked', available });
    }),
    reportCheckFailure: emit((_, message: string) => ({ type: 'check-failed' as const, message })),
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
