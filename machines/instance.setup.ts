/**
 * The instance statechart's vocabulary: its context, the named actors (placeholders the supervisor replaces
 * with `.provide()`), delays computed from context, guards and actions. The states live in `instance.ts`.
 */
import { assign, emit, enqueueActions, fromCallback, fromPromise, setup } from 'xstate';
import type {
  AlertKind,
  CheckInput,
  CheckOutput,
  ExitInfo,
  InstanceEmitted,
  InstanceEvent,
  InstanceInput,
  InstanceTiming,
  ProcessCommand,
  ProcessInput,
  RestartReason,
  UpdateInput,
  UpdateOutput,
} from './instance.types.ts';

export interface InstanceContext {
  key: string;
  timing: InstanceTiming;
  revision: string | null;
  /** Incremented per launch (and adoption); events from an older launch carry an older id and are ignored. */
  launchId: number;
  pid: number | null;
  /** The current launch has checked in at least once. */
  checkedIn: boolean;
  /** Consecutive exits before a first check-in. */
  startupFailures: number;
  restarts: number;
  /** Consecutive unclean exits after a check-in, reset by a stable run (STABLE). */
  crashStreak: number;
  /** The crash-loop alert of the current loop has been sent. */
  loopNotified: boolean;
  /** Run the update actor before the next launch. True at daemon start. */
  updatePending: boolean;
  stopRequested: boolean;
  restartRequested: boolean;
  /** The current process is being killed for not checking in. */
  hangKill: boolean;
  /** The daemon is exiting: once the process is gone, the machine ends. */
  shuttingDown: boolean;
  lastExit: ExitInfo | null;
  /** A `process` child exists (sendTo to a missing child throws, so every command checks this). */
  processOwned: boolean;
  /** An `updateCheck` child is running. */
  checkRunning: boolean;
  /** UPDATE_CHECK came while a check was running: one more check starts when it ends (however many came). */
  checkQueued: boolean;
}

/** InstanceEvent plus the machine's own delayed STABLE (a run lasted `stableRunMs` after its first check-in). */
export type InstanceMachineEvent = InstanceEvent | { type: 'STABLE' };

/** The crash-loop back-off before relaunch number `crashStreak` (≥ 2): doubling from the initial delay, capped. */
export function backoffMs(timing: InstanceTiming, crashStreak: number): number {
  return Math.min(timing.backoffInitialMs * 2 ** Math.max(0, crashStreak - 2), timing.backoffMaxMs);
}

const notProvided = (name: string) => () => {
  throw new Error(`instance machine: actor "${name}" not provided; supply it with instanceMachine.provide({ actors })`);
};

/** The alert as emitted: exit status (none for a hang), the count that matters for its kind, the back-off. */
function alertOf(context: InstanceContext, kind: AlertKind, backoff: number | null = null): InstanceEmitted {
  return {
    type: 'alert',
    kind,
    exit: kind === 'hang' ? null : context.lastExit,
    failures: kind === 'crash' || kind === 'crash-loop' ? context.crashStreak : context.startupFailures,
    backoffMs: backoff,
  };
}

/** The result of a finished update check (`xstate.done.actor.updateCheck` is not in the declared event union). */
function checkAvailable(event: { type: string }): boolean {
  const done = event as { type: string; output?: CheckOutput };
  return done.type === 'xstate.done.actor.updateCheck' && done.output?.available === true;
}

/** A check ended: release its child, and start the one queued during it, if any, as a fresh UPDATE_CHECK. */
function endCheck(
  context: InstanceContext,
  enqueue: { assign(a: Partial<InstanceContext>): void; stopChild(id: string): void; raise(e: InstanceMachineEvent): void },
): void {
  enqueue.assign({ checkRunning: false, checkQueued: false });
  enqueue.stopChild('updateCheck');
  if (context.checkQueued) enqueue.raise({ type: 'UPDATE_CHECK' });
}

const exitOf = (event: InstanceMachineEvent): ExitInfo =>
  event.type === 'PROCESS_EXITED' ? { code: event.code, signal: event.signal } : { code: null, signal: null };

/** The message of a rejected actor, for the emitted `update-failed` and `check-failed` facts. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const instanceSetup = setup({
  types: {
    context: {} as InstanceContext,
    events: {} as InstanceMachineEvent,
    input: {} as InstanceInput,
    emitted: {} as InstanceEmitted,
  },
  actors: {
    update: fromPromise<UpdateOutput, UpdateInput>(notProvided('update')),
    checkUpdate: fromPromise<CheckOutput, CheckInput>(notProvided('checkUpdate')),
    runProcess: fromCallback<ProcessCommand, ProcessInput>(notProvided('runProcess')),
  },
  delays: {
    checkinTimeout: ({ context }) => context.timing.checkinTimeoutMs,
    degradedAfter: ({ context }) => Math.floor(context.timing.checkinTimeoutMs / 2),
    hangAfter: ({ context }) => context.timing.checkinTimeoutMs - Math.floor(context.timing.checkinTimeoutMs / 2),
    stopTimeout: ({ context }) => context.timing.stopTimeoutMs,
    backoff: ({ context }) => backoffMs(context.timing, context.crashStreak),
    stableRun: ({ context }) => context.timing.stableRunMs,
  },
  guards: {
    currentLaunch: ({ context, event }) => 'launchId' in event && event.launchId === context.launchId,
    persist: ({ event }) => event.type === 'SHUTDOWN' && event.persist,
    graceful: ({ event }) => event.type === 'SHUTDOWN' && !event.persist,
    updatePending: ({ context }) => context.updatePending,
    updateAvailable: ({ event }) => checkAvailable(event),
    checkIdle: ({ context }) => !context.checkRunning,
    shuttingDown: ({ context }) => context.shuttingDown,
    stopRequested: ({ context }) => context.stopRequested,
    restartRequested: ({ context }) => context.restartRequested,
    hangKill: ({ context }) => context.hangKill,
    neverCheckedIn: ({ context }) => !context.checkedIn,
    /** The limit is reached, and no pending update could still change the outcome. */
    giveUp: ({ context }) =>
      !context.checkedIn && !context.updatePending && context.startupFailures + 1 >= context.timing.startupFailureLimit,
    unclean: ({ context }) => context.lastExit !== null && (context.lastExit.code !== 0 || context.lastExit.signal !== null),
    firstCrash: ({ context }) => context.crashStreak === 0,
  },
  actions: {
    /** Every ProcessCommand goes through here: a command for a process that is gone is dropped, never thrown. */
    tell: enqueueActions(({ context, enqueue }, command: ProcessCommand) => {
      if (context.processOwned) enqueue.sendTo('process', command);
    }),
    alert: emit(({ context }, p: { kind: AlertKind }) => alertOf(context, p.kind)),
    restart: enqueueActions(({ enqueue }, reason: RestartReason) => {
      enqueue.assign({ restarts: ({ context }) => context.restarts + 1 });
      enqueue.emit({ type: 'restart', reason });
    }),
    /** Leaving `restarting.decide`: the flags that chose the way are spent. */
    settle: assign({ restartRequested: false, hangKill: false }),
    launch: enqueueActions(({ enqueue }) => {
      enqueue.assign({
        launchId: ({ context }) => context.launchId + 1,
        checkedIn: false,
        pid: null,
        processOwned: true,
      });
      enqueue.spawnChild('runProcess', {
        id: 'process',
        input: ({ context }) => ({ key: context.key, launchId: context.launchId, adoptPid: null }),
      });
      enqueue.emit(({ context }) => ({ type: 'launch', launchId: context.launchId }));
    }),
    /** The process of the current launch is gone: remember how, release the child. */
    released: enqueueActions(({ enqueue, event }) => {
      enqueue.assign({ lastExit: exitOf(event), pid: null, processOwned: false });
      enqueue.cancel('stable');
      enqueue.stopChild('process');
    }),
    /**
     * A failed runProcess actor is an exit with unknown status of the current launch. The error event names
     * no launch, so it counts only if the `process` child now held is the one that failed: a late error from
     * the previous child finds a live successor and is dropped. (The graph traversal's stand-in `self` holds
     * no children; there the error counts.)
     */
    processFailed: enqueueActions(({ context, self, enqueue }) => {
      const held = self.getSnapshot().children?.process;
      if (held !== undefined && held.getSnapshot().status !== 'error') return;
      enqueue.raise({ type: 'PROCESS_EXITED', launchId: context.launchId, code: null, signal: null });
    }),
    hang: enqueueActions(({ context, enqueue }) => {
      enqueue.emit(alertOf(context, 'hang'));
      enqueue.assign({ hangKill: true });
      if (context.processOwned) enqueue.sendTo('process', { type: 'KILL', reason: 'hang' } satisfies ProcessCommand);
    }),
    installed: assign(({ context }, out: UpdateOutput) => ({
      revision: out.revision ?? context.revision,
      startupFailures: out.changed ? 0 : context.startupFailures,
    })),
    /** RESTART clears what kept the instance down. */
    clearDown: assign({ stopRequested: false, startupFailures: 0, crashStreak: 0, loopNotified: false }),
    /** An unclean exit after a check-in: count it; alert once per crash loop (first crash, then its loop). */
    crashed: enqueueActions(({ context, enqueue }) => {
      const streak = context.crashStreak + 1;
      const after = { ...context, crashStreak: streak };
      enqueue.assign({ crashStreak: streak, restarts: context.restarts + 1 });
      enqueue.emit({ type: 'restart', reason: 'crash' });
      if (streak === 1) enqueue.emit(alertOf(after, 'crash'));
      else if (!context.loopNotified) {
        enqueue.assign({ loopNotified: true });
        enqueue.emit(alertOf(after, 'crash-loop', backoffMs(context.timing, streak)));
      }
    }),
    /** UPDATE_CHECK during a check: remembered, not dropped (the request may come after what the check saw). */
    queueCheck: assign({ checkQueued: true }),
    checkFinished: enqueueActions(({ context, enqueue, event }) => {
      const available = checkAvailable(event);
      enqueue.assign({ updatePending: ({ context }) => context.updatePending || available });
      endCheck(context, enqueue);
    }),
    checkFailed: enqueueActions(({ context, enqueue, event }) => {
      enqueue.emit({ type: 'check-failed', message: errorMessage((event as { error?: unknown }).error) });
      endCheck(context, enqueue);
    }),
  },
});
