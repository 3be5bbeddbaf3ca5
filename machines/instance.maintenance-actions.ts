/**
 * The maintenance actions: a pending restart or update begins, waits, is carried out or ends; holds begin and end;
 * the previous daemon's plan comes back. Their layer is the last: `instanceSetup` is the machine's whole vocabulary.
 */
import { assign, enqueueActions } from 'xstate';
import type { ProcessCommand } from './instance.actors.types.ts';
import { buildSetup } from './instance.build-actions.ts';
import { inState } from './instance.guards.ts';
import type { MaintenanceOutcome } from './instance.maintenance.types.ts';
import { beginPending, endHold, holdFor, kindOf, restored } from './instance.maintenance-plan.ts';

export const instanceSetup = buildSetup.extend({
  actions: {
    /** A restart or update begins to wait for its moment; it is told once. */
    beginPending: enqueueActions(({ context, enqueue, event }) => {
      const m = context.maintenance;
      const next =
        event.type === 'MAINTAIN'
          ? beginPending(m, { action: 'restart', ...event })
          : event.type === 'UPDATE_FOUND'
            ? beginPending(m, {
                action: 'update',
                source: event.when === null ? 'update' : 'request',
                when: event.when,
                at: event.at,
              })
            : // A launch kept on the installed build by a hold: the found update waits from the hold's latest stamp.
              beginPending(m, { action: 'update', source: 'update', at: m.now });
      enqueue.assign({ maintenance: next });
      if (next.pending !== null)
        enqueue.emit({ type: 'maintenance-pending', pending: next.pending, kind: kindOf(next.pending) });
    }),
    /** The pending action ends (`done`, `forced`, `dropped` for one a person's request replaces). */
    finishPending: enqueueActions(({ context, enqueue }, how: MaintenanceOutcome) => {
      const p = context.maintenance.pending;
      if (p === null) return;
      enqueue.emit({ type: 'maintenance-done', kind: kindOf(p), how });
      enqueue.assign({ maintenance: { ...context.maintenance, pending: null } });
    }),
    /** RoundEnd: the server is told (POST /update) and leaves when its round ends; undeliverable, it is shut down. */
    askToLeave: enqueueActions(({ enqueue, check }) => {
      if (check(inState('#instance.lifecycle.server')))
        enqueue.sendTo('process', { type: 'LEAVE' } satisfies ProcessCommand);
      enqueue.emit({ type: 'maintenance-step', step: 'ask-leave', forced: false });
    }),
    /**
     * The moment (or the deadline) came: a graceful restart, when there is a server to restart; a restore's restart
     * is a RESTORE, which puts its backup back before the launch.
     */
    restartForMaintenance: enqueueActions(({ context, enqueue, check }, forced: boolean) => {
      if (!check(inState('#instance.lifecycle.server'))) return;
      enqueue.emit({ type: 'maintenance-step', step: 'restart', forced });
      const restore = context.maintenance.pending?.restore;
      enqueue.raise(restore ? { type: 'RESTORE', id: restore } : { type: 'RESTART' });
    }),
    /** A person's restart (or restore) with no server running: at once, there is no moment to wait for. */
    restartNow: enqueueActions(({ enqueue, event }) => {
      if (event.type !== 'MAINTAIN') return;
      enqueue.raise(event.restore ? { type: 'RESTORE', id: event.restore } : { type: 'RESTART' });
    }),
    recordHold: enqueueActions(({ context, enqueue, event }) => {
      if (event.type !== 'HOLD') return;
      const next = holdFor(context.maintenance, event);
      enqueue.assign({ maintenance: next });
      if (context.maintenance.hold === null && next.hold !== null)
        enqueue.emit({ type: 'hold-began', hold: next.hold });
    }),
    /** The hold ends: released at the event's time, or run out at its own end. */
    endHold: enqueueActions(({ context, enqueue, event }, how: 'released' | 'expired') => {
      const at =
        event.type === 'RELEASE_HOLD' ? event.at : (context.maintenance.hold?.until ?? context.maintenance.now);
      enqueue.assign({ maintenance: endHold(context.maintenance, at) });
      enqueue.emit({ type: 'maintenance-done', kind: 'hold', how });
    }),
    /** The previous daemon's plan: its hold, and its pending action when it outlives the restart. */
    restorePlan: assign(({ context, event }) =>
      event.type === 'RESTORE_MAINTENANCE'
        ? { maintenance: restored(context.maintenance, event.saved, event.adopted, event.at) }
        : {},
    ),
    /** A pending action the daemon's own restart carried out (it relaunched the server): told as done. */
    restoredDone: enqueueActions(({ enqueue, event }) => {
      if (event.type !== 'RESTORE_MAINTENANCE' || event.saved.pending === null) return;
      const p = { ...event.saved.pending };
      enqueue.emit({ type: 'maintenance-done', kind: kindOf(p), how: 'done' });
    }),
  },
});
