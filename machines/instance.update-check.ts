/**
 * The `updateCheck` region of the instance statechart. Update checks, one at a time: one asked for while one runs is remembered (it may be about a build published
 * since) and runs after it. The daemon's exit ends checking.
 */
import { not } from 'xstate';
import { errorMessage } from './instance.context.ts';
import { instanceSetup as s } from './instance.maintenance-actions.ts';

export const updateCheckRegion = s.createStateConfig({
  initial: 'idle',
  on: { SHUTDOWN: '.off' },
  states: {
    idle: { on: { UPDATE_CHECK: { target: 'queued', actions: 'rememberUpdateWhen' } } },
    queued: {
      always: { guard: not('installAhead'), target: 'running' },
      on: { UPDATE_CHECK: { target: 'queued', actions: 'rememberUpdateWhen' } },
    },
    running: {
      initial: 'once',
      invoke: {
        id: 'updateCheck',
        src: 'checkUpdate',
        input: ({ context }) => ({ key: context.key, revision: context.revision }),
        onDone: [
          {
            guard: 'askedAgain',
            target: 'queued',
            actions: { type: 'recordCheck', params: ({ event }) => event.output },
          },
          { target: 'idle', actions: { type: 'recordCheck', params: ({ event }) => event.output } },
        ],
        onError: [
          {
            guard: 'askedAgain',
            target: 'queued',
            actions: { type: 'reportCheckFailure', params: ({ event }) => errorMessage(event.error) },
          },
          {
            target: 'idle',
            actions: { type: 'reportCheckFailure', params: ({ event }) => errorMessage(event.error) },
          },
        ],
      },
      states: {
        once: { on: { UPDATE_CHECK: { target: 'again', actions: 'rememberUpdateWhen' } } },
        /** Another check was asked for: it runs when this one ends. */
        again: { on: { UPDATE_CHECK: { target: 'again', actions: 'rememberUpdateWhen' } } },
      },
    },
    off: { type: 'final', tags: ['busy', 'shutting-down'] },
  },
});
