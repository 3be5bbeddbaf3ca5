/**
 * The maintenance region's context and the pure logic on it: the pending restart or update, its deadline, and a
 * hold. The machine has no clock: the supervisor stamps its maintenance events with the time (`at`), and the
 * region's timers run from the latest stamp (`now`).
 */
import type {
  Hold,
  MaintenanceKind,
  MaintenancePolicy,
  MaintenanceRules,
  PendingAction,
  PendingSource,
  SavedMaintenance,
} from './instance.maintenance.types.ts';

export interface MaintenanceContext {
  pending: PendingAction | null;
  hold: Hold | null;
  /** The supervisor's clock at its last maintenance event, or the time a timer of the region ran out at. */
  now: number;
  /** The policy a check asked for with `update?when=` gives the build it finds; null: `Maintenance.When`. */
  updateWhen: MaintenancePolicy | null;
  /** `Maintenance.When`, `MaxDelayMinutes` and the player poll, from the input and CONFIG. */
  rules: MaintenanceRules;
}

const DEFAULT_RULES: MaintenanceRules = { when: 'RoundEnd', maxDelayMs: 120 * 60_000, pollMs: 10_000 };

/** Nothing pending, no hold: a new instance's maintenance. */
export const noMaintenance = (rules: MaintenanceRules = DEFAULT_RULES): MaintenanceContext => ({
  pending: null,
  hold: null,
  now: 0,
  updateWhen: null,
  rules,
});

/** A scheduled restart, a person's restart or an update, as the notices name them. */
export const kindOf = (p: PendingAction): Exclude<MaintenanceKind, 'hold'> =>
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
    at: number;
  },
): MaintenanceContext {
  const { rules } = m;
  const pending: PendingAction = {
    action: req.action,
    source: req.source,
    when: req.when ?? rules.when,
    since: req.at,
    deadline: req.at + rules.maxDelayMs,
    maxDelayMs: rules.maxDelayMs,
    ...(req.reason ? { reason: req.reason } : {}),
    ...(req.restore ? { restore: req.restore } : {}),
  };
  return { ...m, pending, now: req.at };
}

/** A hold begins, or a new one replaces the end of the one that stands (it keeps its start). */
export const holdFor = (
  m: MaintenanceContext,
  req: { ms: number; reason: string; at: number },
): MaintenanceContext => ({
  ...m,
  hold: { since: m.hold?.since ?? req.at, until: req.at + req.ms, reason: req.reason },
  now: req.at,
});

/**
 * The hold ends at `at` (released or run out): a pending action gets its full MaxDelayMinutes from now, so it still
 * waits for its moment instead of being forced at once.
 */
export function endHold(m: MaintenanceContext, at: number): MaintenanceContext {
  const p = m.pending;
  const pending = p === null ? p : { ...p, deadline: Math.max(p.deadline, at + p.maxDelayMs) };
  return { ...m, pending, hold: null, now: at };
}

/** The wait until the pending action's deadline, from the latest stamp. */
export const untilDeadline = (m: MaintenanceContext): number => Math.max(0, (m.pending?.deadline ?? m.now) - m.now);

/** The wait until the hold's end, from the latest stamp. */
export const untilHoldEnds = (m: MaintenanceContext): number => Math.max(0, (m.hold?.until ?? m.now) - m.now);

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

/** The region's context after the previous daemon's plan: its hold, and its pending action if it outlives it. */
export function restored(
  m: MaintenanceContext,
  saved: SavedMaintenance,
  adopted: boolean,
  at: number,
): MaintenanceContext {
  const p = saved.pending;
  const pending: PendingAction | null =
    p === null || !adopted
      ? null
      : {
          action: p.action,
          source: p.source,
          when: p.when,
          since: p.since,
          deadline: p.deadline,
          maxDelayMs: p.maxDelayMs,
          ...(p.reason ? { reason: p.reason } : {}),
        };
  return { ...m, pending, hold: saved.hold, now: at };
}
