/**
 * Maintenance of one instance as pure data and functions of the time: the pending restart or update,
 * its policy and deadline, and a hold. No timers and no I/O: `maintenance.ts` asks `nextStep` what to do at a
 * time and with a player count, and carries it out. Times are epoch milliseconds.
 */
import type { MaintenancePolicy } from '../config/sections/maintenance.ts';

/**
 * What began a pending action: a `RestartSchedule` fire (`schedule`), a found update (`update`), or a person's
 * request with `?when=` (`request`). Only the first two wait for a hold: a person who names a moment means it.
 */
export type PendingSource = 'schedule' | 'update' | 'request';

export interface PendingAction {
  action: 'restart' | 'update';
  source: PendingSource;
  when: MaintenancePolicy;
  since: number;
  /** When it is done with a graceful shutdown, whatever the policy (MaxDelayMinutes after it began or a hold ended). */
  deadline: number;
  maxDelayMs: number;
  /** RoundEnd: the server was told (POST /update) and leaves when its round ends. */
  asked: boolean;
  /** The shutdown was asked for: only the exit is awaited now. */
  carried: boolean;
  /** That shutdown was the deadline's (MaxDelayMinutes), not the policy's moment: its end is told as forced. */
  forced: boolean;
}

export interface Hold {
  since: number;
  until: number;
  reason: string;
}

export interface MaintenancePlan {
  pending: PendingAction | null;
  hold: Hold | null;
}

export const EMPTY_PLAN: MaintenancePlan = { pending: null, hold: null };

/** What the runner does now: tell the server to leave at round end, or shut it down gracefully (`forced`: deadline). */
export type Step = { type: 'ask-leave' } | { type: 'shutdown'; forced: boolean };

export const heldAt = (plan: MaintenancePlan, now: number): boolean => plan.hold !== null && plan.hold.until > now;

/** The pending action waits for the hold to end. */
export const waitsForHold = (plan: MaintenancePlan, now: number): boolean =>
  plan.pending !== null && plan.pending.source !== 'request' && heldAt(plan, now);

/**
 * A restart or update begins. One already pending stays (a found update is installed by any relaunch anyway),
 * unless a person asks with `?when=`: their policy replaces it.
 */
export function begin(
  plan: MaintenancePlan,
  req: {
    action: 'restart' | 'update';
    source: PendingSource;
    when: MaintenancePolicy;
    maxDelayMs: number;
    now: number;
  },
): MaintenancePlan {
  if (plan.pending !== null && (req.source !== 'request' || plan.pending.carried)) return plan;
  const { now, ...rest } = req;
  const pending = { ...rest, since: now, deadline: now + req.maxDelayMs, asked: false, carried: false, forced: false };
  return { ...plan, pending };
}

/** The server went (any exit, asked for or not): the pending action is done. */
export const finish = (plan: MaintenancePlan): MaintenancePlan => ({ ...plan, pending: null });

export function hold(plan: MaintenancePlan, req: { now: number; ms: number; reason: string }): MaintenancePlan {
  return { ...plan, hold: { since: plan.hold?.since ?? req.now, until: req.now + req.ms, reason: req.reason } };
}

/**
 * The hold ends (released or run out): a pending action gets its full MaxDelayMinutes from now, so it still waits
 * for its moment instead of being forced at once.
 */
export function release(plan: MaintenancePlan, now: number): MaintenancePlan {
  const p = plan.pending;
  const pending = p === null || p.carried ? p : { ...p, deadline: Math.max(p.deadline, now + p.maxDelayMs) };
  return { pending, hold: null };
}

/** A hold whose end has come is released; the plan as it is otherwise. */
export function expire(plan: MaintenancePlan, now: number): { plan: MaintenancePlan; expired: boolean } {
  if (plan.hold === null || plan.hold.until > now) return { plan, expired: false };
  return { plan: release(plan, now), expired: true };
}

/**
 * What to do at `now`, given the player count of the last poll (null: unknown). Call after `expire`. Each step is
 * returned once: the plan records it.
 */
export function nextStep(
  plan: MaintenancePlan,
  now: number,
  players: number | null,
): { plan: MaintenancePlan; step: Step | null } {
  const p = plan.pending;
  if (p === null || p.carried || waitsForHold(plan, now)) return { plan, step: null };
  const carried = { ...plan, pending: { ...p, carried: true } };
  if (now >= p.deadline)
    return {
      plan: { ...plan, pending: { ...p, carried: true, forced: true } },
      step: { type: 'shutdown', forced: true },
    };
  if (p.when === 'Now') return { plan: carried, step: { type: 'shutdown', forced: false } };
  if (p.when === 'Empty' && players === 0) return { plan: carried, step: { type: 'shutdown', forced: false } };
  if (p.when === 'RoundEnd' && !p.asked)
    return { plan: { ...plan, pending: { ...p, asked: true } }, step: { type: 'ask-leave' } };
  return { plan, step: null };
}

/** The pending action needs the player count (Empty, not held, not carried out yet). */
export const needsPlayers = (plan: MaintenancePlan, now: number): boolean =>
  plan.pending !== null && plan.pending.when === 'Empty' && !plan.pending.carried && !waitsForHold(plan, now);

/** When the plan must be looked at again by itself (a hold's end, a deadline), or null when nothing waits on time. */
export function wakeAt(plan: MaintenancePlan): number | null {
  const times: number[] = [];
  if (plan.hold !== null) times.push(plan.hold.until);
  if (plan.pending !== null && !plan.pending.carried) times.push(plan.pending.deadline);
  return times.length === 0 ? null : Math.min(...times);
}
