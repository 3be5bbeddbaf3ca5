/**
 * The maintenance region: restarts and found updates carried out at `Maintenance.When`'s moment or forced at their
 * deadline, and a hold that defers all but a person's requests. Then the `updateCheck` region.
 */
import { and, not, or } from 'xstate';
import { errorMessage } from './instance.context.ts';
import type { RestoreStep } from './instance.maintenance-plan.ts';
import { instanceSetup as s } from './instance.setup.ts';

const ACTION = '#instance.maintenance.action';
const done = { type: 'finishPending', params: 'done' } as const;
const restore = (step: RestoreStep, target: string) =>
  ({ guard: { type: 'restores', params: step }, target, actions: 'restorePlan' }) as const;
/** A person's policy replaces what was pending (a found update is installed by any relaunch anyway). */
const replace = (guard: 'requested' | 'updateRequested') =>
  ({
    guard,
    target: 'pending',
    reenter: true,
    actions: [{ type: 'finishPending', params: 'dropped' }, 'beginPending'],
  }) as const;

export const maintenanceRegion = s.createStateConfig({
  type: 'parallel',
  invoke: { id: 'schedule', src: 'maintenanceSchedule', input: ({ context }) => ({ key: context.key }) },
  states: {
    action: {
      initial: 'idle',
      on: { SHUTDOWN: '.off' },
      states: {
        idle: {
          on: {
            MAINTAIN: [
              { guard: 'serverLive', target: 'pending', actions: 'beginPending' },
              // Without a running server nobody plays: a plain restart (or restore), at once.
              { guard: 'requested', actions: 'restartNow' },
            ],
            // Without a server the next launch installs it, unless a hold makes that wait.
            UPDATE_FOUND: { guard: or(['serverLive', 'held']), target: 'pending', actions: 'beginPending' },
            // A hold kept a relaunch on the installed build: the found update waits for the hold's end.
            LAUNCHED: { guard: and(['updatePending', 'held']), target: 'pending', actions: 'beginPending' },
            RESTORE_MAINTENANCE: [
              restore('forced', 'forced'),
              restore('carried', 'carrying-out'),
              restore('asked', 'pending.waiting.RoundEnd.asked'),
              restore('pending', 'pending'),
              { guard: { type: 'restores', params: 'dropped' }, actions: ['restoredDone', 'restorePlan'] },
              { actions: 'restorePlan' },
            ],
          },
        },
        pending: {
          initial: 'choosing',
          always: { guard: 'updateInstalled', target: 'idle', actions: done },
          on: {
            MAINTAIN: replace('requested'),
            UPDATE_FOUND: replace('updateRequested'),
            SERVER_GONE: { target: 'idle', actions: done },
          },
          states: {
            choosing: {
              always: [
                { guard: 'waitsForHold', target: 'on-hold' },
                { guard: 'policyNow', target: `${ACTION}.carrying-out` },
                { guard: 'policyEmpty', target: 'waiting.Empty' },
                { target: 'waiting.RoundEnd' },
              ],
            },
            'on-hold': {
              always: { guard: not('waitsForHold'), target: 'choosing' },
              // A held update outlives the server's exit: the next launch keeps the installed build (installHeld).
              on: { SERVER_GONE: { guard: 'pendingUpdate' } },
            },
            /** Waiting for the moment its policy names; at the deadline it is forced. */
            waiting: {
              // Entered by `choosing` (or a restored plan) at the child its policy names.
              initial: 'RoundEnd',
              always: { guard: 'waitsForHold', target: 'on-hold' },
              after: { maintenanceDeadline: `${ACTION}.forced` },
              states: {
                RoundEnd: {
                  initial: 'asking',
                  states: {
                    asking: { entry: 'askToLeave', always: 'asked' },
                    /** The server was told (POST /update): its clean exit is the restart (`leftForRestart`). */
                    asked: {},
                  },
                },
                Empty: {
                  initial: 'polling',
                  states: {
                    polling: {
                      invoke: {
                        id: 'players',
                        src: 'readPlayers',
                        input: ({ context }) => ({ key: context.key }),
                        onDone: [
                          {
                            guard: { type: 'noPlayers', params: ({ event }) => event.output },
                            target: `${ACTION}.carrying-out`,
                          },
                          { target: 'resting' },
                        ],
                        // A failed read is dropped: the next poll asks.
                        onError: 'resting',
                      },
                    },
                    resting: { after: { playerPoll: 'polling' } },
                  },
                },
              },
            },
          },
        },
        'carrying-out': {
          entry: { type: 'restartForMaintenance', params: false },
          // Without a server there is nothing to restart (the next launch does what was pending); once the server
          // exited, the restart is done.
          always: { guard: not('serverThere'), target: 'idle', actions: done },
        },
        forced: {
          entry: { type: 'restartForMaintenance', params: true },
          always: { guard: not('serverThere'), target: 'idle', actions: { type: 'finishPending', params: 'forced' } },
        },
        off: { type: 'final' },
      },
    },
    hold: {
      initial: 'free',
      on: { SHUTDOWN: '.off' },
      states: {
        free: {
          on: {
            HOLD: { target: 'held', actions: 'recordHold' },
            RESTORE_MAINTENANCE: { guard: 'restoresHold', target: 'held' },
          },
        },
        held: {
          after: { holdEnds: { target: 'free', actions: { type: 'endHold', params: 'expired' } } },
          on: {
            // A new hold replaces the end of this one: its timer starts again.
            HOLD: { target: 'held', reenter: true, actions: 'recordHold' },
            RELEASE_HOLD: { target: 'free', actions: { type: 'endHold', params: 'released' } },
          },
        },
        off: { type: 'final' },
      },
    },
  },
});

/** One check at a time; one asked meanwhile runs after (a build may have been published since). */
export const updateCheckRegion = s.createStateConfig({
  initial: 'idle',
  on: { SHUTDOWN: '.off' },
  states: {
    idle: { on: { UPDATE_CHECK: { target: 'queued', actions: 'rememberUpdateAsk' } } },
    queued: {
      always: { guard: not('installAhead'), target: 'running' },
      on: { UPDATE_CHECK: { target: 'queued', actions: 'rememberUpdateAsk' } },
    },
    running: {
      initial: 'once',
      invoke: {
        id: 'updateCheck',
        src: 'checkUpdate',
        input: ({ context }) => ({ key: context.key, revision: context.revision }),
        onDone: ['queued', 'idle'].map((target) => ({
          guard: target === 'queued' ? 'askedAgain' : undefined,
          target,
          actions: { type: 'recordCheck', params: ({ event }) => event.output },
        })),
        onError: ['queued', 'idle'].map((target) => ({
          guard: target === 'queued' ? 'askedAgain' : undefined,
          target,
          actions: { type: 'reportCheckFailure', params: ({ event }) => errorMessage(event.error) },
        })),
      },
      states: {
        once: { on: { UPDATE_CHECK: { target: 'again', actions: 'rememberUpdateAsk' } } },
        /** Another check was asked for: it runs when this one ends. */
        again: { on: { UPDATE_CHECK: { target: 'again', actions: 'rememberUpdateAsk' } } },
      },
    },
    off: { type: 'final', tags: ['busy', 'shutting-down'] },
  },
});
