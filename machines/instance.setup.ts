/** The statechart's one `setup()`: types, actor placeholders the supervisor provides, delays, guards, actions. */
import { and, fromCallback, fromPromise, not, or, setup, stateIn } from 'xstate';
import { buildActions, lifecycleActions } from './instance.actions.ts';
import {
  backoffMs,
  givesUp,
  type InstanceContext,
  type InstanceMachineEvent,
  inLoop,
  unaskedRelaunch,
} from './instance.context.ts';
import {
  maintenanceActions,
  type RestoreStep,
  restoreStep,
  untilDeadline,
  untilHoldEnds,
} from './instance.maintenance-plan.ts';
import type { BusyTag } from './instance.refusals.ts';
import type {
  CheckOutput,
  InstanceEmitted,
  InstanceInput,
  ProcessCommand,
  RestoreOutput,
  RollbackOutput,
  UpdateOutput,
} from './instance.types.ts';

/** `adoptPid`: adopt the previous daemon's server instead of spawning one. */
export type ProcessInput = { key: string; launchId: number; adoptPid: number | null };
/** `by`: who asked for the build (`POST /update`), named in its bus events. */
export type UpdateInput = { key: string; revision: string | null; by?: string };
export type CheckInput = UpdateInput;
export type PlayersInput = { key: string };
/** The settings changed: compute the next fires again. */
export type ScheduleCommand = { type: 'RESCHEDULE' };
/** `withData`: also restore the snapshot taken before the build being removed was installed. */
export type RollbackInput = { key: string; withData: boolean };
export type RestoreInput = { key: string; id: string };

const notProvided = (name: string) => () => {
  throw new Error(`instance machine: actor "${name}" not provided; supply it with instanceMachine.provide({ actors })`);
};

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
    /** Sends MAINTAIN {source: 'schedule'} and UPDATE_CHECK as the schedules fire; not provided, nothing fires. */
    maintenanceSchedule: fromCallback<ScheduleCommand, PlayersInput>(() => undefined),
  },
  delays: {
    checkinTimeout: ({ context }) => context.timing.checkinTimeoutMs,
    degradedAfter: ({ context }) => Math.floor(context.timing.checkinTimeoutMs / 2),
    hangAfter: ({ context }) => context.timing.checkinTimeoutMs - Math.floor(context.timing.checkinTimeoutMs / 2),
    backoff: ({ context }) => backoffMs(context.timing, context.crashStreak),
    blockedBackoff: ({ context }) => backoffMs(context.timing, (context.blocked?.attempts ?? 1) + 1),
    stableRun: ({ context }) => context.timing.stableRunMs,
    maintenanceDeadline: ({ context }) => untilDeadline(context.maintenance),
    holdEnds: ({ context }) => untilHoldEnds(context.maintenance),
    playerPoll: ({ context }) => context.maintenance.rules.pollMs,
  },
  guards: {
    currentLaunch: ({ context, event }) => 'launchId' in event && event.launchId === context.launchId,
    checkinCounts: and(['currentLaunch', not(stateIn('#instance.lifecycle.server.stopping'))]),
    graceful: ({ event }) => event.type === 'SHUTDOWN' && !event.persist,
    updatePending: ({ context }) => context.updatePending,
    shuttingDown: ({ context }) => context.exitIntent === 'shutdown',
    stopRequested: ({ context }) => context.exitIntent === 'stop',
    rollbackRequested: ({ context }) => context.exitIntent === 'rollback',
    restoreRequested: ({ context }) => context.exitIntent === 'restore',
    // An install runs or is about to: a check asked meanwhile waits, to look from the revision it installs.
    installAhead: or([
      stateIn('#instance.lifecycle.updating'),
      stateIn('#instance.lifecycle.decide'),
      and([stateIn('#instance.lifecycle.stopped.failing'), 'updatePending']),
    ]),
    askedAgain: stateIn('#instance.updateCheck.running.again'),
    /** No server ran, so nothing counts. */
    launchBlocked: ({ event }) => event.type === 'PROCESS_BLOCKED',
    giveUp: ({ context }) => context.exitIntent === 'crash' && givesUp(context),
    crashLoop: ({ context }) => inLoop(context),
    /** A server is wanted and there: there is something to restart. */
    serverLive: and([stateIn('#instance.lifecycle.server'), not(stateIn('#instance.lifecycle.server.stopping'))]),
    serverThere: stateIn('#instance.lifecycle.server'),
    /** Nothing but a restart, rollback or restore starts an instance the operator stopped. */
    operatorStopped: stateIn('#instance.operatorStop.stopped'),
    /** At the start, `stop` can only be the input's: a stop data.json remembers. */
    stopRemembered: ({ context }) => context.stop.at !== '',
    held: stateIn('#instance.maintenance.hold.held'),
    /** The pending action waits for the hold to end: a person's request (`?when=`) never does. */
    waitsForHold: and(['held', ({ context }) => context.maintenance.pending?.source !== 'request']),
    policyNow: ({ context }) => context.maintenance.pending?.when === 'Now',
    policyEmpty: ({ context }) => context.maintenance.pending?.when === 'Empty',
    pendingUpdate: ({ context }) => context.maintenance.pending?.action === 'update',
    /** A server launched after `updating` (which spends `updatePending`). */
    updateInstalled: and(['pendingUpdate', not('updatePending'), stateIn('#instance.lifecycle.server')]),
    requested: ({ event }) => event.type === 'MAINTAIN' && event.source === 'request',
    /** A build found by a check asked with `?when=`: it replaces what is pending, as a person's request does. */
    updateRequested: ({ event }) => event.type === 'UPDATE_FOUND' && event.when !== null,
    noPlayers: (_, players: number | null) => players === 0,
    // A crash during a hold relaunches the installed build; the update waits for the hold's end.
    installHeld: and([({ context }) => unaskedRelaunch(context), 'held']),
    restores: ({ event }, step: RestoreStep) =>
      event.type === 'RESTORE_MAINTENANCE' && restoreStep(event.saved, event.adopted) === step,
    restoresHold: ({ event }) => event.type === 'RESTORE_MAINTENANCE' && event.saved.hold !== null,
  },
  actions: { ...lifecycleActions, ...buildActions, ...maintenanceActions },
});
