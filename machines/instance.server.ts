/**
 * The `server` state of the instance statechart's lifecycle: a server process is owned, being started, running, or
 * being stopped. It invokes the process actor (runProcess, src/supervisor), so the process lives exactly as long as
 * the instance is in here; every way out (an exit, a blocked launch, a failed actor) goes to the lifecycle's `decide`.
 */
import { instanceSetup as s } from './instance.maintenance-actions.ts';

const toStopping = '#instance.lifecycle.server.stopping';

export const serverState = s.createStateConfig({
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
    RESTART: {
      target: '.stopping',
      actions: [
        { type: 'requestRelaunch', params: 'restart' },
        { type: 'tell', params: { type: 'STOP_GRACEFULLY', reason: 'Restart requested by the watchdog' } },
      ],
    },
    ROLLBACK: {
      target: '.stopping',
      actions: [
        { type: 'requestRelaunch', params: 'rollback' },
        'noteRollback',
        { type: 'tell', params: { type: 'STOP_GRACEFULLY', reason: 'Rollback requested by the watchdog' } },
      ],
    },
    RESTORE: {
      target: '.stopping',
      actions: [
        { type: 'requestRelaunch', params: 'restore' },
        'noteRestore',
        {
          type: 'tell',
          params: { type: 'STOP_GRACEFULLY', reason: 'Backup restore requested by the watchdog' },
        },
      ],
    },
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
    starting: { after: { checkinTimeout: { target: toStopping, actions: 'killHung' } } },
    running: { after: { degradedAfter: 'awaiting-checkin' } },
    'awaiting-checkin': { after: { hangAfter: { target: toStopping, actions: 'killHung' } } },
    /**
     * No timer here: runProcess escalates (the shutdown request's and the exit's windows, then SIGKILL to the
     * process group, whose exit always follows). It alone knows what it asked and when; a second timer here
     * only raced it.
     */
    stopping: {},
  },
});
