/** The statechart's actions on the server's life, builds and data, and the typed helpers actions are written with. */

import { assign, enqueueActions, type GuardPredicate, type ParameterizedObject, stateIn } from 'xstate';
import {
  alertOf,
  backoffMs,
  classifyExit,
  exitOf,
  firstHang,
  type InstanceContext,
  type InstanceMachineEvent,
  type MaintenanceContext,
  want,
} from './instance.context.ts';
import type {
  CheckOutput,
  InstanceEmitted,
  ProcessCommand,
  RestoreOutput,
  RollbackOutput,
  UpdateOutput,
} from './instance.types.ts';

export type InstanceDelay =
  | 'checkinTimeout'
  | 'degradedAfter'
  | 'hangAfter'
  | 'backoff'
  | 'blockedBackoff'
  | 'stableRun'
  | 'maintenanceDeadline'
  | 'holdEnds'
  | 'playerPoll';

type Params = ParameterizedObject['params'] | undefined;

/** An `enqueueActions` action typed for this machine outside `setup()`; it names no actor, action or guard. */
export const act = <P extends Params = undefined>(
  collect: Parameters<
    typeof enqueueActions<
      InstanceContext,
      InstanceMachineEvent,
      P,
      InstanceMachineEvent,
      never,
      never,
      never,
      InstanceDelay,
      InstanceEmitted
    >
  >[0],
) => enqueueActions(collect);

/** An `assign` action typed for this machine outside `setup()`. */
export const set = <P extends Params = undefined>(
  assignment: Parameters<typeof assign<InstanceContext, InstanceMachineEvent, P, InstanceMachineEvent, never>>[0],
) => assign(assignment);

/** `stateIn` as `check` in an action takes it (its guard-name type parameter is `any`, check's `never`). */
export const inState = (id: string) =>
  stateIn(id) as unknown as GuardPredicate<InstanceContext, InstanceMachineEvent, undefined, never>;

export const lifecycleActions = {
  /** Every ProcessCommand goes through here: one for a process that is not owned is dropped, never thrown. */
  tell: act(({ enqueue, check }, command: ProcessCommand) => {
    if (check(inState('#instance.lifecycle.server'))) enqueue.sendTo('process', command);
  }),
  /** START, RESTART, ROLLBACK and RESTORE of an instance without a server clear what kept it down. */
  clearDown: act(({ enqueue }) => {
    enqueue.assign({ startupFailures: 0, crashStreak: 0, loopHangs: 0, exitIntent: null });
    enqueue.raise({ type: 'RESUMED' });
  }),
  /** The same for a server that must go first; a shutdown already under way still wins. */
  requestRelaunch: act(({ context, enqueue }, intent: 'restart' | 'rollback' | 'restore') => {
    enqueue.assign({ startupFailures: 0, crashStreak: 0, loopHangs: 0, exitIntent: want(context.exitIntent, intent) });
    enqueue.raise({ type: 'RESUMED' });
  }),
  /** STOP: remembered wherever a server is, or is about to be, running; a stopped instance is left as it is. */
  requestStop: act(({ context, enqueue, check }) => {
    if (check(inState('#instance.lifecycle.stopped'))) return;
    enqueue.assign({ exitIntent: want(context.exitIntent, 'stop') });
    if (check(inState('#instance.lifecycle.server')))
      enqueue.sendTo('process', { type: 'LEAVE' } satisfies ProcessCommand);
  }),
  /** STOP with no server to end (between relaunches). */
  recordStop: set({ exitIntent: 'stop' }),
  noteStopper: set(({ event }) => (event.type === 'STOP' ? { stop: { by: event.by ?? '', at: event.at ?? '' } } : {})),
  requestShutdown: set(({ context }) => ({ exitIntent: want(context.exitIntent, 'shutdown') })),
  /** Missed check-ins: the first hang of a loop is told and dumped, later ones only killed (`firstHang`). */
  killHung: act(({ context, enqueue }) => {
    const first = firstHang(context);
    if (first) enqueue.emit(alertOf(context, 'hang'));
    enqueue.assign({ exitIntent: want(context.exitIntent, 'hang') });
    enqueue.sendTo('process', { type: 'KILL', reason: 'hang', dump: first } satisfies ProcessCommand);
  }),
  /** Entering `server`: a new launch id; an adopted server has checked in already (it ran under the last daemon). */
  beginLaunch: act(({ enqueue, event }) => {
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
  /** Leaving `server`. With SHUTDOWN {persist}, DETACH first, so the actor's cleanup leaves the server running. */
  releaseServer: act(({ enqueue, event }) => {
    if (event.type === 'SHUTDOWN' && event.persist)
      enqueue.sendTo('process', { type: 'DETACH' } satisfies ProcessCommand);
    enqueue.assign({ pid: null, secret: null });
    enqueue.cancel('stable');
  }),
  /** With a pid the spawn succeeded: a blocked-launch episode, if any, is over. */
  recordStart: act(({ context, enqueue, event }) => {
    if (event.type !== 'PROCESS_STARTED') return;
    enqueue.assign({ secret: event.secret, pid: event.pid ?? context.pid });
    if (event.pid === null || context.blocked === null) return;
    enqueue.emit({ type: 'launch-unblocked', kind: context.blocked.kind, attempts: context.blocked.attempts });
    enqueue.assign({ blocked: null });
  }),
  recordBlock: set(({ context, event }) =>
    event.type === 'PROCESS_BLOCKED'
      ? { blocked: { kind: event.kind, message: event.message, attempts: (context.blocked?.attempts ?? 0) + 1 } }
      : {},
  ),
  announceBlock: act(({ context, enqueue }) => {
    const b = context.blocked;
    if (b === null) return;
    enqueue.emit({ type: 'launch-blocked', ...b, retryMs: backoffMs(context.timing, b.attempts + 1) });
  }),
  recordCheckin: act(({ context, enqueue }) => {
    if (!context.checkedIn) {
      enqueue.assign({ checkedIn: true, startupFailures: 0 });
      enqueue.raise({ type: 'STABLE' }, { delay: 'stableRun', id: 'stable' });
    }
    enqueue.emit({ type: 'checkin', launchId: context.launchId });
  }),
  /** A run lasted stableRunMs: one whose check-in is overdue may be hanging, so it is asked again later. */
  endLoopIfStable: act(({ enqueue, check }) => {
    if (check(inState('#instance.lifecycle.server.running'))) enqueue.assign({ crashStreak: 0, loopHangs: 0 });
    else enqueue.raise({ type: 'STABLE' }, { delay: 'stableRun', id: 'stable' });
  }),
  /** The current process exited (`classifyExit`). */
  recordExit: act(({ context, enqueue, event, check }) => {
    // Asked to leave at its round end for a restart: a clean exit is that restart.
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
  /** A back-off ran out (`unaskedRelaunch`). */
  retry: set({ retrying: true }),
  spendIntent: set({ exitIntent: null }),
  /**
   * A failed runProcess is an exit of unknown status; its error names no launch, so it counts only if the held
   * `process` child failed (the graph traversal's stand-in `self` holds none: there it counts).
   */
  exitOnActorFailure: act(({ context, self, enqueue }) => {
    const held = self.getSnapshot().children?.process;
    if (held !== undefined && held.getSnapshot().status !== 'error') return;
    enqueue.raise({ type: 'PROCESS_EXITED', launchId: context.launchId, code: null, signal: null });
  }),
};

/** A policy and asker given with `POST /update` belong to the check they asked for only. */
const forgetAsk = (m: MaintenanceContext): MaintenanceContext => ({ ...m, updateWhen: null, updateBy: '' });

export const buildActions = {
  recordInstall: set(({ context }, out: UpdateOutput) => ({
    revision: out.revision ?? context.revision,
    // A new build gets its own startup tries (the real watchdog resets its count the same way).
    startupFailures: out.changed ? 0 : context.startupFailures,
    updateBy: '',
  })),
  reportUpdateFailure: act(({ enqueue }, message: string) => {
    enqueue.assign({ updateBy: '' });
    enqueue.emit({ type: 'update-failed', message });
  }),
  noteRollback: set({ rollbackWithData: ({ event }) => event.type === 'ROLLBACK' && event.withData === true }),
  noteRestore: set({ restoreFrom: ({ event }) => (event.type === 'RESTORE' ? event.id : null) }),
  recordRollback: act(({ context, enqueue }, out: RollbackOutput) => {
    enqueue.assign({ revision: out.revision, exitIntent: context.exitIntent === 'stop' ? 'stop' : null });
    enqueue.emit({ type: 'rolled-back', revision: out.revision });
  }),
  reportRollbackFailure: act(({ context, enqueue }, message: string) => {
    if (context.exitIntent === 'rollback') enqueue.assign({ exitIntent: null });
    enqueue.emit({ type: 'rollback-failed', message });
  }),
  recordRestore: act(({ context, enqueue }, out: RestoreOutput) => {
    enqueue.assign({ exitIntent: context.exitIntent === 'stop' ? 'stop' : null });
    enqueue.emit({ type: 'restored', id: context.restoreFrom ?? '', saved: out.saved });
  }),
  reportRestoreFailure: act(({ context, enqueue }, message: string) => {
    if (context.exitIntent === 'restore') enqueue.assign({ exitIntent: null });
    enqueue.emit({ type: 'restore-failed', id: context.restoreFrom ?? '', message });
  }),
  /** A found update is remembered (a later "none" never cancels it); the maintenance region says when it is done. */
  recordCheck: act(({ context, enqueue }, { available, at }: CheckOutput) => {
    if (available) {
      // A build found again by a schedule's check still names whoever asked for it first.
      const by = context.maintenance.updateBy || context.updateBy;
      enqueue.assign({ updatePending: true, updateBy: by });
      enqueue.raise({ type: 'UPDATE_FOUND', when: context.maintenance.updateWhen, by, at });
    }
    enqueue.assign({ maintenance: forgetAsk(context.maintenance) });
    enqueue.emit({ type: 'update-checked', available });
  }),
  reportCheckFailure: act(({ context, enqueue }, message: string) => {
    enqueue.assign({ maintenance: forgetAsk(context.maintenance) });
    enqueue.emit({ type: 'check-failed', message });
  }),
  /** The policy and asker a `POST /update` gave, for the check it queued. */
  rememberUpdateAsk: set(({ context, event }) => {
    if (event.type !== 'UPDATE_CHECK') return {};
    const m = context.maintenance;
    return { maintenance: { ...m, updateWhen: event.when ?? m.updateWhen, updateBy: event.by ?? m.updateBy } };
  }),
};
