/** The actions on builds and data: what an update check, an install, a rollback or a restore leaves behind. */
import { assign, emit, enqueueActions } from 'xstate';
import type { CheckOutput, RestoreOutput, RollbackOutput, UpdateOutput } from './instance.actors.types.ts';
import { serverSetup } from './instance.server-actions.ts';

export const buildSetup = serverSetup.extend({
  actions: {
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
    recordCheck: enqueueActions(({ context, enqueue }, { available, at }: CheckOutput) => {
      if (available) {
        enqueue.assign({ updatePending: true });
        enqueue.raise({ type: 'UPDATE_FOUND', when: context.maintenance.updateWhen, at });
      }
      // A policy asked with `update?when=` belongs to this check only.
      enqueue.assign({ maintenance: { ...context.maintenance, updateWhen: null } });
      enqueue.emit({ type: 'update-checked', available });
    }),
    reportCheckFailure: enqueueActions(({ context, enqueue }, message: string) => {
      enqueue.assign({ maintenance: { ...context.maintenance, updateWhen: null } });
      enqueue.emit({ type: 'check-failed', message });
    }),
    rememberUpdateWhen: assign(({ context, event }) =>
      event.type === 'UPDATE_CHECK' && event.when !== undefined
        ? { maintenance: { ...context.maintenance, updateWhen: event.when } }
        : {},
    ),
  },
});
