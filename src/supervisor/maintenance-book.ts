/**
 * One instance's maintenance plan as the runner (maintenance.ts) changes it: every change is kept in data.json and
 * told on the bus once (maintenance-notices.ts). What a change is, is the pure functions of maintenance-plan.ts.
 */
import type { MaintenancePolicy } from '../config/sections/maintenance.ts';
import { describeError } from '../errors.ts';
import { announceDone, announceHold, announcePending, kindOf } from './maintenance-notices.ts';
import {
  begin,
  EMPTY_PLAN,
  expire,
  finish,
  heldAt,
  hold,
  type MaintenancePlan,
  nextStep,
  type PendingAction,
  release,
  type Step,
  waitsForHold,
} from './maintenance-plan.ts';
import type { Clock, MaintenanceHost } from './maintenance-types.ts';

const iso = (t: number) => new Date(t).toISOString();

export class MaintenanceBook {
  plan: MaintenancePlan = EMPTY_PLAN;

  constructor(
    private readonly host: MaintenanceHost,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes up the plan the previous daemon left. A pending action outlives it only with the server it was for (an
   * adopted one): otherwise the daemon's own restart relaunched the server, and the action is done.
   */
  takeUp(saved: MaintenancePlan | null, adopted: boolean): void {
    this.plan = saved ?? EMPTY_PLAN;
    if (this.plan.pending !== null && !adopted) {
      this.host.log.info('the pending maintenance was done by the daemon restart', {
        action: this.plan.pending.action,
      });
      announceDone(this.host, kindOf(this.plan.pending), 'done', this.clock.now());
      this.plan = finish(this.plan);
      this.persist();
    } else if (this.plan.pending?.carried) {
      // The previous daemon asked for the shutdown but was gone before the server went: ask again.
      this.plan = { ...this.plan, pending: { ...this.plan.pending, carried: false } };
    }
  }

  /** A restart or update begins (see `begin`); false when the plan stays as it was. */
  begin(
    action: 'restart' | 'update',
    source: PendingAction['source'],
    when: MaintenancePolicy,
    reason?: string,
  ): boolean {
    const before = this.plan.pending;
    const maxDelayMs = (this.host.settings()?.MaxDelayMinutes ?? 120) * 60_000;
    this.plan = begin(this.plan, { action, source, when, maxDelayMs, now: this.clock.now() });
    const p = this.plan.pending;
    if (p === null || p === before) return false;
    if (before !== null) announceDone(this.host, kindOf(before), 'dropped', this.clock.now());
    this.host.log.info(`maintenance ${action} pending`, {
      when,
      source,
      deadline: iso(p.deadline),
      ...(reason ? { reason } : {}),
    });
    announcePending(this.host, p, reason);
    this.persist();
    return true;
  }

  /**
   * The server went: the pending action is done; false when nothing was pending or a held update waits on. A held
   * update is done only once a launch has `installed` it: a relaunch during the hold may not (installsHeld).
   */
  finish(installed = false): boolean {
    const p = this.plan.pending;
    if (p === null) return false;
    if (p.action === 'update' && !installed && waitsForHold(this.plan, this.clock.now())) return false;
    announceDone(this.host, kindOf(p), p.forced ? 'forced' : 'done', this.clock.now());
    this.plan = finish(this.plan);
    this.persist();
    return true;
  }

  hold(ms: number, reason: string): void {
    const now = this.clock.now();
    const fresh = !heldAt(this.plan, now);
    this.plan = hold(this.plan, { now, ms, reason });
    const until = now + ms;
    this.host.log.info('maintenance held', { until: iso(until), reason });
    if (fresh) announceHold(this.host, { reason, until, at: now });
    this.persist();
  }

  /** Ends a hold; false when there was none. */
  release(): boolean {
    if (this.plan.hold === null) return false;
    this.plan = release(this.plan, this.clock.now());
    this.host.log.info('maintenance hold released');
    announceDone(this.host, 'hold', 'released', this.clock.now());
    this.persist();
    return true;
  }

  /** A hold whose end has come is released, then what to do now with this player count (null: unknown). */
  step(players: number | null): Step | null {
    const now = this.clock.now();
    const expired = expire(this.plan, now);
    if (expired.expired) {
      this.plan = expired.plan;
      this.host.log.info('maintenance hold ran out');
      announceDone(this.host, 'hold', 'expired', now);
      this.persist();
    }
    const next = nextStep(this.plan, now, players);
    if (next.plan !== this.plan) {
      this.plan = next.plan;
      this.persist();
    }
    return next.step;
  }

  /** The server did not take POST /update and is restarted instead: only its exit is awaited now. */
  carried(): boolean {
    if (this.plan.pending === null) return false;
    this.plan = { ...this.plan, pending: { ...this.plan.pending, carried: true } };
    this.persist();
    return true;
  }

  held(): boolean {
    return heldAt(this.plan, this.clock.now());
  }

  private persist(): void {
    this.host
      .save(this.plan)
      .catch((err: unknown) =>
        this.host.log.warn('could not keep the maintenance plan in data.json', { error: describeError(err) }),
      );
  }
}
