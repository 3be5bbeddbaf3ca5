/** The maintenance region's logic and actions; its timers run from the latest stamp (`now`) on its monotonic half. */
import { act, inState, set } from './instance.actions.ts';
import type { MaintenanceContext } from './instance.context.ts';
import type {
  Hold,
  MaintenanceKind,
  MaintenanceOutcome,
  MaintenancePolicy,
  MaintenanceRules,
  PendingAction,
  PendingSource,
  ProcessCommand,
  SavedMaintenance,
  SavedPending,
  Stamp,
} from './instance.types.ts';

const DEFAULT_RULES: MaintenanceRules = { when: 'RoundEnd', maxDelayMs: 120 * 60_000, pollMs: 10_000 };

export const noMaintenance = (rules: MaintenanceRules = DEFAULT_RULES): MaintenanceContext => ({
  pending: null,
  hold: null,
  now: { wall: 0, mono: 0 },
  updateWhen: null,
  updateBy: '',
  rules,
});

export const kindOf = (p: SavedPending): Exclude<MaintenanceKind, 'hold'> =>
  p.action === 'update' ? 'update' : p.source === 'schedule' ? 'scheduled-restart' : 'restart';

/** A restart or update begins to wait for its moment: MaxDelayMinutes from `at`. */
export function beginPending(
  m: MaintenanceContext,
  req: {
    action: 'restart' | 'update';
    source: PendingSource;
    when?: MaintenancePolicy | null;
    reason?: string;
    restore?: string;
    by?: string;
    at: Stamp;
  },
): MaintenanceContext {
  const { rules } = m;
  const pending: PendingAction = {
    action: req.action,
    source: req.source,
    when: req.when ?? rules.when,
    since: req.at.wall,
    deadline: req.at.wall + rules.maxDelayMs,
    due: req.at.mono + rules.maxDelayMs,
    maxDelayMs: rules.maxDelayMs,
    ...(req.reason ? { reason: req.reason } : {}),
    ...(req.restore ? { restore: req.restore } : {}),
    ...(req.by ? { by: req.by } : {}),
  };
  return { ...m, pending, now: req.at };
}

/** The hold ends at `at`: a pending action gets its full MaxDelayMinutes from then, not forced at once. */
export function endHold(m: MaintenanceContext, at: Stamp): MaintenanceContext {
  const p = m.pending;
  const later = p !== null && at.mono + p.maxDelayMs > p.due;
  const pending = p && later ? { ...p, due: at.mono + p.maxDelayMs, deadline: at.wall + p.maxDelayMs } : p;
  return { ...m, pending, hold: null, now: at };
}

export const untilDeadline = (m: MaintenanceContext): number =>
  Math.max(0, (m.pending?.due ?? m.now.mono) - m.now.mono);

export const untilHoldEnds = (m: MaintenanceContext): number => Math.max(0, (m.hold?.ends ?? m.now.mono) - m.now.mono);

const holdEnd = (h: Hold): Stamp => ({ wall: h.until, mono: h.ends });

/** How a restored plan's pending action is taken up: where it had got to, or `dropped` (the restart did it). */
export type RestoreStep = 'forced' | 'carried' | 'asked' | 'pending' | 'dropped';

export function restoreStep(saved: SavedMaintenance, adopted: boolean): RestoreStep | null {
  const p = saved.pending;
  if (p === null) return null;
  // A pending action outlives the daemon only with the server it was for (an adopted one).
  if (!adopted) return 'dropped';
  if (p.forced && p.carried) return 'forced';
  if (p.carried) return 'carried';
  if (p.asked && p.when === 'RoundEnd') return 'asked';
  return 'pending';
}

/** After the previous daemon's plan: its wall times (all two daemons share) put on the monotonic clock at `at`. */
export function restored(
  m: MaintenanceContext,
  saved: SavedMaintenance,
  adopted: boolean,
  at: Stamp,
): MaintenanceContext {
  const p = saved.pending;
  const onMono = (wall: number) => at.mono + (wall - at.wall);
  const pending: PendingAction | null =
    p === null || !adopted
      ? null
      : {
          action: p.action,
          source: p.source,
          when: p.when,
          since: p.since,
          deadline: p.deadline,
          due: onMono(p.deadline),
          maxDelayMs: p.maxDelayMs,
          ...(p.reason ? { reason: p.reason } : {}),
        };
  const hold: Hold | null = saved.hold && { ...saved.hold, ends: onMono(saved.hold.until) };
  return { ...m, pending, hold, now: at };
}

export const maintenanceActions = {
  beginPending: act(({ context, enqueue, event }) => {
    const m = context.maintenance;
    const next =
      event.type === 'MAINTAIN'
        ? beginPending(m, { action: 'restart', ...event })
        : event.type === 'UPDATE_FOUND'
          ? beginPending(m, {
              action: 'update',
              source: event.when === null ? 'update' : 'request',
              when: event.when,
              by: event.by,
              at: event.at,
            })
          : // A launch kept on the installed build by a hold: the found update waits from the hold's latest stamp.
            beginPending(m, { action: 'update', source: 'update', at: m.now });
    enqueue.assign({ maintenance: next });
    if (next.pending !== null)
      enqueue.emit({ type: 'maintenance-pending', pending: next.pending, kind: kindOf(next.pending) });
  }),
  finishPending: act(({ context, enqueue }, how: MaintenanceOutcome) => {
    const p = context.maintenance.pending;
    if (p === null) return;
    enqueue.emit({ type: 'maintenance-done', kind: kindOf(p), how });
    enqueue.assign({ maintenance: { ...context.maintenance, pending: null } });
  }),
  /** RoundEnd: the server is told (POST /update) and leaves when its round ends; undeliverable, it is shut down. */
  askToLeave: act(({ enqueue, check }) => {
    if (check(inState('#instance.lifecycle.server')))
      enqueue.sendTo('process', { type: 'LEAVE' } satisfies ProcessCommand);
    enqueue.emit({ type: 'maintenance-step', step: 'ask-leave', forced: false });
  }),
  /** The moment (or the deadline) came: a graceful restart, or a RESTORE for a restore's. */
  restartForMaintenance: act(({ context, enqueue, check }, forced: boolean) => {
    if (!check(inState('#instance.lifecycle.server'))) return;
    enqueue.emit({ type: 'maintenance-step', step: 'restart', forced });
    const restore = context.maintenance.pending?.restore;
    enqueue.raise(restore ? { type: 'RESTORE', id: restore } : { type: 'RESTART' });
  }),
  /** A person's restart (or restore) with no server running: at once, there is no moment to wait for. */
  restartNow: act(({ enqueue, event }) => {
    if (event.type !== 'MAINTAIN') return;
    enqueue.raise(event.restore ? { type: 'RESTORE', id: event.restore } : { type: 'RESTART' });
  }),
  /** A hold begins, or a new one replaces the end of the one that stands (keeping its start). */
  recordHold: act(({ context, enqueue, event }) => {
    if (event.type !== 'HOLD') return;
    const { ms, reason, at } = event;
    const was = context.maintenance.hold;
    const hold: Hold = { since: was?.since ?? at.wall, until: at.wall + ms, ends: at.mono + ms, reason };
    enqueue.assign({ maintenance: { ...context.maintenance, hold, now: at } });
    if (was === null) enqueue.emit({ type: 'hold-began', hold });
  }),
  endHold: act(({ context, enqueue, event }, how: 'released' | 'expired') => {
    const { hold, now } = context.maintenance;
    const at = event.type === 'RELEASE_HOLD' ? event.at : hold ? holdEnd(hold) : now;
    enqueue.assign({ maintenance: endHold(context.maintenance, at) });
    enqueue.emit({ type: 'maintenance-done', kind: 'hold', how });
  }),
  restorePlan: set(({ context, event }) =>
    event.type === 'RESTORE_MAINTENANCE'
      ? { maintenance: restored(context.maintenance, event.saved, event.adopted, event.at) }
      : {},
  ),
  /** A pending action the daemon's own restart carried out: told as done. */
  restoredDone: act(({ enqueue, event }) => {
    if (event.type !== 'RESTORE_MAINTENANCE' || event.saved.pending === null) return;
    enqueue.emit({ type: 'maintenance-done', kind: kindOf(event.saved.pending), how: 'done' });
  }),
};
