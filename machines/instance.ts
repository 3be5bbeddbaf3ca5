/**
 * The instance statechart (docs/statechart.md); `src/supervisor` provides its actors. `updateCheck` and `maintenance`
 * are in instance.maintenance.ts. Every launch and every end of a server passes the transient `decide`.
 */
import { and, assign, not, sendTo } from 'xstate';
import { errorMessage } from './instance.context.ts';
import { maintenanceRegion, updateCheckRegion } from './instance.maintenance.ts';
import { noMaintenance } from './instance.maintenance-plan.ts';
import { instanceSetup as s } from './instance.setup.ts';

const toDecide = '#instance.lifecycle.decide';

/** A failed rollback or restore is reported; a server stopped for it comes back through `decide`. */
const failed = (
  requested: 'rollbackRequested' | 'restoreRequested',
  report: 'reportRollbackFailure' | 'reportRestoreFailure',
) => {
  const actions = { type: report, params: ({ event }: { event: { error: unknown } }) => errorMessage(event.error) };
  return [
    { guard: requested, target: 'decide', actions },
    { target: 'stopped.idle', actions },
  ];
};

const toStopping = '#instance.lifecycle.server.stopping';

/** A request the server must go for first: the relaunch's intent (and what it asked), then a graceful stop. */
const stopFor = (intent: 'restart' | 'rollback' | 'restore', what: string, note?: 'noteRollback' | 'noteRestore') =>
  ({
    target: '.stopping',
    actions: [
      { type: 'requestRelaunch', params: intent },
      ...(note ? [note] : []),
      { type: 'tell', params: { type: 'STOP_GRACEFULLY', reason: `${what} requested by the watchdog` } },
    ],
  }) as const;

/** Invokes the process, so it lives exactly as long as the instance is in here; every way out goes to `decide`. */
const serverState = s.createStateConfig({
  initial: 'starting',
  entry: 'beginLaunch',
  exit: 'releaseServer',
  invoke: {
    id: 'process',
    src: 'runProcess',
    input: ({ context, event }) => ({
      key: context.key,
      launchId: context.launchId,
      adoptPid: event.type === 'ADOPT' ? event.pid : null,
    }),
    // The actor itself failed (unhandled, it would stop this machine: statelyai/xstate#5088).
    onError: { actions: 'exitOnActorFailure' },
  },
  on: {
    PROCESS_STARTED: { guard: 'currentLaunch', actions: 'recordStart' },
    PROCESS_EXITED: { guard: 'currentLaunch', target: 'decide', actions: 'recordExit' },
    PROCESS_BLOCKED: { guard: 'currentLaunch', target: 'decide', actions: 'recordBlock' },
    RESTART: stopFor('restart', 'Restart'),
    ROLLBACK: stopFor('rollback', 'Rollback', 'noteRollback'),
    RESTORE: stopFor('restore', 'Backup restore', 'noteRestore'),
    SHUTDOWN: {
      guard: 'graceful',
      target: '.stopping',
      actions: ['requestShutdown', { type: 'tell', params: { type: 'STOP_GRACEFULLY', reason: 'Watchdog stopping' } }],
    },
    STABLE: { actions: 'endLoopIfStable' },
    // Check-ins count while the server is wanted, not while it is being stopped.
    CHECKIN: { guard: 'checkinCounts', target: '.running', actions: 'recordCheckin' },
  },
  states: {
    // The first check-in's time runs from the spawn (re-entered), not from a preparation a starved machine drags out.
    starting: {
      on: { PROCESS_STARTED: { guard: 'currentLaunch', target: 'starting', reenter: true, actions: 'recordStart' } },
      after: { checkinTimeout: { target: toStopping, actions: 'killHung' } },
    },
    running: { after: { degradedAfter: 'awaiting-checkin' } },
    'awaiting-checkin': { after: { hangAfter: { target: toStopping, actions: 'killHung' } } },
    // No timer: runProcess escalates up to SIGKILL of the process group, whose exit always follows.
    stopping: {},
  },
});

export const instanceMachine = s.createMachine({
  id: 'instance',
  context: ({ input }) => ({
    key: input.key,
    timing: input.timing,
    revision: input.revision,
    launchId: 0,
    secret: null,
    pid: null,
    checkedIn: false,
    startupFailures: 0,
    restarts: 0,
    crashStreak: 0,
    loopHangs: 0,
    updatePending: true,
    updateBy: '',
    exitIntent: null,
    retrying: false,
    stop: input.stop ?? { by: '', at: '' },
    rollbackWithData: false,
    restoreFrom: null,
    lastExit: null,
    blocked: null,
    maintenance: noMaintenance(input.maintenance),
  }),
  type: 'parallel',
  on: {
    // New timings apply from the next timer armed; the schedules are computed again at once.
    CONFIG: {
      actions: [
        assign(({ context, event }) => ({
          timing: event.timing,
          maintenance: { ...context.maintenance, rules: event.maintenance ?? context.maintenance.rules },
        })),
        sendTo('schedule', { type: 'RESCHEDULE' }),
      ],
    },
  },
  states: {
    /** The server's life: the status shows the path in this region (`stopped.idle`, `server.running`). */
    lifecycle: {
      initial: 'stopped',
      on: {
        STOP: { actions: 'requestStop' },
        SHUTDOWN: { target: '.exited' },
      },
      states: {
        stopped: {
          initial: 'idle',
          // A stop ends a blocked-launch episode: the next start is told afresh if it is blocked again.
          entry: assign({ blocked: null }),
          on: {
            RESTART: { target: 'decide', actions: 'clearDown' },
            ROLLBACK: { target: 'rolling-back', actions: ['clearDown', 'noteRollback'] },
            RESTORE: { target: 'restoring', actions: ['clearDown', 'noteRestore'] },
          },
          states: {
            idle: {
              on: {
                // An operator's stop outlives the daemon: its start launches nothing until a restart.
                START: { guard: not('operatorStopped'), target: toDecide, actions: 'clearDown' },
                ADOPT: { target: '#instance.lifecycle.server.running' },
              },
            },
            failing: {
              on: {
                // A new build may fix it: a fresh count (the real watchdog's stays at the limit). Never while an
                // operator's stop stands.
                UPDATE_FOUND: {
                  guard: not('operatorStopped'),
                  target: toDecide,
                  actions: assign({ startupFailures: 0 }),
                },
              },
            },
          },
        },
        /** Transient: every launch and every end of a server passes here, and leaves by the first that applies. */
        decide: {
          exit: assign({ retrying: false }),
          always: [
            { guard: 'shuttingDown', target: 'exited' },
            { guard: 'stopRequested', target: 'stopped.idle' },
            { guard: 'rollbackRequested', target: 'rolling-back' },
            { guard: 'restoreRequested', target: 'restoring' },
            { guard: 'launchBlocked', target: 'restarting.blocked', actions: 'spendIntent' },
            { guard: 'giveUp', target: 'stopped.failing', actions: 'spendIntent' },
            { guard: 'crashLoop', target: 'restarting.backoff', actions: 'spendIntent' },
            { guard: and(['updatePending', not('installHeld')]), target: 'updating', actions: 'spendIntent' },
            { target: 'server', actions: 'spendIntent' },
          ],
        },
        updating: {
          tags: ['busy', 'installing'],
          entry: assign({ updatePending: false }),
          invoke: {
            id: 'update',
            src: 'update',
            input: ({ context }) => ({
              key: context.key,
              revision: context.revision,
              ...(context.updateBy ? { by: context.updateBy } : {}),
            }),
            onDone: { target: toDecide, actions: { type: 'recordInstall', params: ({ event }) => event.output } },
            // A failed update is reported and the installed build starts anyway.
            onError: {
              target: 'decide',
              actions: { type: 'reportUpdateFailure', params: ({ event }) => errorMessage(event.error) },
            },
          },
          on: {
            // Withdraws a STOP given during the update.
            RESTART: { actions: 'clearDown' },
          },
        },
        server: serverState,
        /** Waiting to launch again, with no server: `RESTART` launches at once, `STOP` stays stopped. */
        restarting: {
          initial: 'backoff',
          on: {
            STOP: { target: 'stopped.idle', actions: 'recordStop' },
            RESTART: { target: 'decide', actions: 'clearDown' },
          },
          states: {
            backoff: {
              tags: ['busy', 'backing-off'],
              after: { backoff: { target: toDecide, actions: 'retry' } },
            },
            /** Blocked by the daemon's resources or a held game port: retried for ever, counting no startup failure. */
            blocked: {
              tags: ['busy', 'launch-blocked'],
              entry: 'announceBlock',
              after: { blockedBackoff: { target: toDecide, actions: 'retry' } },
            },
          },
        },
        'rolling-back': {
          tags: ['busy', 'rolling-back'],
          invoke: {
            id: 'rollback',
            src: 'rollback',
            input: ({ context }) => ({ key: context.key, withData: context.rollbackWithData }),
            onDone: { target: toDecide, actions: { type: 'recordRollback', params: ({ event }) => event.output } },
            // A server stopped for the rollback comes back on the build still installed.
            onError: failed('rollbackRequested', 'reportRollbackFailure'),
          },
        },
        restoring: {
          tags: ['busy', 'restoring'],
          invoke: {
            id: 'restore',
            src: 'restore',
            input: ({ context }) => ({ key: context.key, id: context.restoreFrom ?? '' }),
            onDone: { target: toDecide, actions: { type: 'recordRestore', params: ({ event }) => event.output } },
            // A server stopped for the restore comes back on the data it had.
            onError: failed('restoreRequested', 'reportRestoreFailure'),
          },
        },
        exited: { type: 'final', tags: ['busy', 'shutting-down'] },
      },
    },
    /** The operator's stop (`stoppedBy`): from a STOP, across daemon restarts, until a restart, rollback or restore. */
    operatorStop: {
      initial: 'remembered',
      on: { SHUTDOWN: '.off' },
      states: {
        /** Transient: a stop data.json remembers (the input) stands from the daemon's start. */
        remembered: { always: [{ guard: 'stopRemembered', target: 'stopped' }, { target: 'none' }] },
        none: { on: { STOP: { target: 'stopped', actions: 'noteStopper' } } },
        stopped: { on: { STOP: { actions: 'noteStopper' }, RESUMED: 'none' } },
        off: { type: 'final' },
      },
    },
    updateCheck: updateCheckRegion,
    maintenance: maintenanceRegion,
  },
});
