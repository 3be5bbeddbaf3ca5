/**
 * The instance statechart (described in docs/statechart.md): one per game-server instance. Pure: it names its
 * actors, delays, guards and actions; `src/supervisor` supplies the actors with `.provide()`. No I/O, no clock,
 * no randomness.
 *
 * The server process is a spawned child (`process`), not an invoke: it must stay owned across `starting`,
 * `running`, `awaiting-checkin` and `restarting.stopping`, which are siblings. It is stopped explicitly once
 * its exit has been handled, and with SHUTDOWN {persist} it is told to DETACH before the machine ends.
 */
import { and, assign, emit, raise, spawnChild } from 'xstate';
import { errorMessage, instanceSetup as s } from './instance.setup.ts';

export { backoffMs, type InstanceContext, type InstanceMachineEvent } from './instance.setup.ts';

/** What every state that owns the `process` child does with its exit, STOP, RESTART, SHUTDOWN and a found update. */
const owning = s.createStateConfig({
  on: {
    PROCESS_EXITED: { guard: 'currentLaunch', target: '#instance.restarting.decide', actions: 'released' },
    SPAWN_FAILED: { guard: 'currentLaunch', target: '#instance.restarting.decide', actions: 'released' },
    STOP: { actions: [assign({ stopRequested: true }), { type: 'tell', params: { type: 'LEAVE' } }] },
    RESTART: {
      target: '#instance.restarting.stopping',
      actions: ['clearDown', assign({ restartRequested: true }), { type: 'tell', params: { type: 'SHUTDOWN', reason: 'Restart requested.' } }],
    },
    SHUTDOWN: {
      guard: 'graceful',
      target: '#instance.restarting.stopping',
      actions: [assign({ shuttingDown: true }), { type: 'tell', params: { type: 'SHUTDOWN', reason: 'Watchdog shutting down.' } }],
    },
    'xstate.done.actor.updateCheck': {
      guard: 'updateAvailable',
      actions: ['checkFinished', { type: 'tell', params: { type: 'NOTIFY_UPDATE' } }],
    },
  },
});

export const instanceMachine = s.createMachine({
  id: 'instance',
  context: ({ input }) => ({
    key: input.key,
    timing: input.timing,
    revision: input.revision,
    launchId: 0,
    pid: null,
    checkedIn: false,
    startupFailures: 0,
    restarts: 0,
    crashStreak: 0,
    loopNotified: false,
    updatePending: true,
    stopRequested: false,
    restartRequested: false,
    hangKill: false,
    shuttingDown: false,
    lastExit: null,
    processOwned: false,
    checkRunning: false,
    checkQueued: false,
  }),
  initial: 'stopped',
  on: {
    CONFIG: { actions: assign({ timing: ({ event }) => event.timing }) },
    ROLLED_BACK: { actions: assign({ revision: ({ event }) => event.revision }) },
    PROCESS_STARTED: { guard: 'currentLaunch', actions: assign({ pid: ({ event }) => event.pid }) },
    STABLE: { actions: assign({ crashStreak: 0, loopNotified: false }) },
    UPDATE_CHECK: [
      {
        guard: 'checkIdle',
        actions: [
          assign({ checkRunning: true }),
          spawnChild('checkUpdate', { id: 'updateCheck', input: ({ context }) => ({ key: context.key, revision: context.revision }) }),
        ],
      },
      { actions: 'queueCheck' },
    ],
    'xstate.done.actor.updateCheck': { actions: 'checkFinished' },
    'xstate.error.actor.updateCheck': { actions: 'checkFailed' },
    // The runProcess actor itself failed (an unhandled error would stop this machine: statelyai/xstate#5088).
    'xstate.error.actor.process': { actions: 'processFailed' },
    SHUTDOWN: [
      { guard: 'persist', target: '.exited', actions: { type: 'tell', params: { type: 'DETACH' } } },
      { target: '.exited' },
    ],
  },
  states: {
    stopped: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            START: [
              { guard: 'updatePending', target: '#instance.updating', actions: assign({ stopRequested: false }) },
              { target: '#instance.starting', actions: assign({ stopRequested: false }) },
            ],
            RESTART: [
              { guard: 'updatePending', target: '#instance.updating', actions: 'clearDown' },
              { target: '#instance.starting', actions: 'clearDown' },
            ],
            ADOPT: {
              target: '#instance.running',
              actions: [
                assign({
                  launchId: ({ context }) => context.launchId + 1,
                  pid: ({ event }) => event.pid,
                  checkedIn: true,
                  stopRequested: false,
                  processOwned: true,
                }),
                spawnChild('runProcess', {
                  id: 'process',
                  input: ({ context }) => ({ key: context.key, launchId: context.launchId, adoptPid: context.pid }),
                }),
                emit(({ context }) => ({ type: 'launch' as const, launchId: context.launchId })),
              ],
            },
          },
        },
        failing: {
          on: {
            // No update is pending here: giving up waits for one, and one found here leaves at once (below).
            RESTART: { target: '#instance.starting', actions: 'clearDown' },
            // A new build may fix what kept failing: reset the count and try it (the real watchdog keeps the
            // count at the limit, so the next failure gives up again at once).
            'xstate.done.actor.updateCheck': {
              guard: 'updateAvailable',
              target: '#instance.updating',
              actions: ['checkFinished', assign({ startupFailures: 0 })],
            },
          },
        },
      },
    },
    updating: {
      entry: assign({ updatePending: false }),
      invoke: {
        id: 'update',
        src: 'update',
        input: ({ context }) => ({ key: context.key, revision: context.revision }),
        // A new build gets its own startup tries (the real watchdog resets its count the same way).
        onDone: [
          { guard: 'stopRequested', target: 'stopped.idle', actions: { type: 'installed', params: ({ event }) => event.output } },
          { target: 'starting', actions: { type: 'installed', params: ({ event }) => event.output } },
        ],
        onError: [
          {
            guard: 'stopRequested',
            target: 'stopped.idle',
            actions: emit(({ event }) => ({ type: 'update-failed' as const, message: errorMessage(event.error) })),
          },
          { target: 'starting', actions: emit(({ event }) => ({ type: 'update-failed' as const, message: errorMessage(event.error) })) },
        ],
      },
      on: {
        STOP: { actions: assign({ stopRequested: true }) },
        RESTART: { actions: 'clearDown' },
      },
    },
    starting: {
      entry: 'launch',
      after: { checkinTimeout: { target: 'restarting.stopping', actions: 'hang' } },
      on: {
        CHECKIN: {
          guard: 'currentLaunch',
          target: 'running',
          actions: [
            assign({ checkedIn: true, startupFailures: 0 }),
            raise({ type: 'STABLE' }, { delay: 'stableRun', id: 'stable' }),
            emit(({ context }) => ({ type: 'checkin' as const, launchId: context.launchId })),
          ],
        },
        ...owning.on,
      },
    },
    running: {
      after: { degradedAfter: 'awaiting-checkin' },
      on: {
        CHECKIN: {
          guard: 'currentLaunch',
          target: 'running',
          reenter: true,
          actions: emit(({ context }) => ({ type: 'checkin' as const, launchId: context.launchId })),
        },
        ...owning.on,
      },
    },
    'awaiting-checkin': {
      after: { hangAfter: { target: 'restarting.stopping', actions: 'hang' } },
      on: {
        CHECKIN: {
          guard: 'currentLaunch',
          target: 'running',
          actions: emit(({ context }) => ({ type: 'checkin' as const, launchId: context.launchId })),
        },
        ...owning.on,
      },
    },
    restarting: {
      initial: 'decide',
      states: {
        stopping: {
          after: {
            stopTimeout: { target: 'stopping', reenter: true, actions: { type: 'tell', params: { type: 'KILL', reason: 'stop-timeout' } } },
          },
          on: {
            PROCESS_EXITED: { guard: 'currentLaunch', target: 'decide', actions: 'released' },
            SPAWN_FAILED: { guard: 'currentLaunch', target: 'decide', actions: 'released' },
            STOP: { actions: assign({ stopRequested: true }) },
            RESTART: { actions: assign({ stopRequested: false, restartRequested: true, startupFailures: 0, crashStreak: 0, loopNotified: false }) },
            SHUTDOWN: { guard: 'graceful', actions: assign({ shuttingDown: true }) },
          },
        },
        decide: {
          always: [
            { guard: 'shuttingDown', target: '#instance.exited' },
            { guard: 'stopRequested', target: '#instance.stopped.idle', actions: ['settle', { type: 'alert', params: { kind: 'stopped' } }] },
            { guard: and(['restartRequested', 'updatePending']), target: '#instance.updating', actions: [{ type: 'restart', params: 'request' }, 'settle'] },
            { guard: 'restartRequested', target: '#instance.starting', actions: [{ type: 'restart', params: 'request' }, 'settle'] },
            { guard: and(['hangKill', 'updatePending']), target: '#instance.updating', actions: [{ type: 'restart', params: 'hang' }, 'settle'] },
            { guard: 'hangKill', target: '#instance.starting', actions: [{ type: 'restart', params: 'hang' }, 'settle'] },
            {
              guard: 'giveUp',
              target: '#instance.stopped.failing',
              actions: [assign({ startupFailures: ({ context }) => context.startupFailures + 1 }), { type: 'alert', params: { kind: 'failing' } }],
            },
            {
              guard: and(['neverCheckedIn', 'updatePending']),
              target: '#instance.updating',
              actions: [assign({ startupFailures: ({ context }) => context.startupFailures + 1 }), { type: 'restart', params: 'startup-failure' }],
            },
            {
              guard: 'neverCheckedIn',
              target: '#instance.starting',
              actions: [assign({ startupFailures: ({ context }) => context.startupFailures + 1 }), { type: 'restart', params: 'startup-failure' }],
            },
            { guard: and(['unclean', 'firstCrash', 'updatePending']), target: '#instance.updating', actions: 'crashed' },
            { guard: and(['unclean', 'firstCrash']), target: '#instance.starting', actions: 'crashed' },
            { guard: 'unclean', target: 'backoff', actions: 'crashed' },
            { guard: 'updatePending', target: '#instance.updating', actions: { type: 'restart', params: 'update' } },
            { target: '#instance.starting', actions: { type: 'restart', params: 'exit' } },
          ],
        },
        backoff: {
          after: {
            backoff: [{ guard: 'updatePending', target: '#instance.updating' }, { target: '#instance.starting' }],
          },
          on: {
            STOP: { target: '#instance.stopped.idle', actions: assign({ stopRequested: true }) },
            RESTART: [
              { guard: 'updatePending', target: '#instance.updating', actions: 'clearDown' },
              { target: '#instance.starting', actions: 'clearDown' },
            ],
          },
        },
      },
    },
    exited: { type: 'final' },
  },
});
