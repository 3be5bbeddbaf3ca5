/**
 * The instance statechart's setup call: its types, the named actors (placeholders the supervisor replaces with
 * `.provide()`) and the delays computed from context. The rest of the vocabulary extends it, each layer seeing the
 * names before it: guards (instance.guards.ts), the server's actions (instance.server-actions.ts), the actions on
 * builds and data (instance.build-actions.ts) and on maintenance (instance.maintenance-actions.ts, which exports
 * the finished `instanceSetup`). The states live in `instance.ts`.
 */
import { fromCallback, fromPromise, setup } from 'xstate';
import type {
  CheckInput,
  CheckOutput,
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
} from './instance.actors.types.ts';
import { backoffMs, blockedBackoffMs, type InstanceContext, type InstanceMachineEvent } from './instance.context.ts';
import { untilDeadline, untilHoldEnds } from './instance.maintenance-plan.ts';
import type { BusyTag } from './instance.refusals.ts';
import type { InstanceEmitted, InstanceInput } from './instance.types.ts';

const notProvided = (name: string) => () => {
  throw new Error(`instance machine: actor "${name}" not provided; supply it with instanceMachine.provide({ actors })`);
};

export const baseSetup = setup({
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
});
