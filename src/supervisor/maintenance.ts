/**
 * Carries out one instance's maintenance (issue 13): arms the `RestartSchedule` and `UpdateSchedule` timers,
 * polls the server's player count for `When: Empty`, asks the server to leave at round end or restarts it, keeps
 * the plan (pending action, hold) in data.json, and puts `maintenance:*` facts on the bus. The decisions are the
 * pure functions of `maintenance-plan.ts`; this module is their clock and their hands.
 */
import type { MaintenanceKind } from '../bus.ts';
import { nextFire } from '../config/cron.ts';
import type { MaintenancePolicy } from '../config/maintenance-schema.ts';
import { describeError } from '../errors.ts';
import type { MaintenanceStatus } from './contract.ts';
import { maintenanceStatus } from './maintenance-status.ts';
import type { Clock, MaintenanceHost } from './maintenance-types.ts';
import {
  begin,
  EMPTY_PLAN,
  expire,
  finish,
  heldAt,
  hold,
  needsPlayers,
  nextStep,
  release,
  waitsForHold,
  wakeAt,
  type MaintenancePlan,
  type PendingAction,
  type Step,
} from './maintenance-plan.ts';

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

const MAX_TIMER_MS = 2 ** 31 - 1;
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

const kindOf = (p: PendingAction): MaintenanceKind =>
  p.action === 'update' ? 'update' : p.source === 'schedule' ? 'scheduled-restart' : 'restart';

export class Maintenance {
  private plan: MaintenancePlan = EMPTY_PLAN;
  private nextRestart: number | null = null;
  private nextCheck: number | null = null;
  private timer: unknown = null;
  private polling = false;
  /** The policy an update asked for with `?when=` applies to the check it started. */
  private updateWhen: MaintenancePolicy | null = null;
  private stopped = false;
  private readonly clock: Clock;

  constructor(private readonly host: MaintenanceHost) {
    this.clock = host.clock ?? realClock;
  }

  /**
   * Takes up the plan the previous daemon left. A pending action outlives it only with the server it was for (an
   * adopted one): otherwise the daemon's own restart relaunched the server, and the action is done.
   */
  start(saved: MaintenancePlan | null, adopted: boolean): void {
    this.plan = saved ?? EMPTY_PLAN;
    if (this.plan.pending !== null && !adopted) {
      this.host.log.info('the pending maintenance was done by the daemon restart', {
        action: this.plan.pending.action,
      });
      this.emitDone(kindOf(this.plan.pending), 'done');
      this.plan = finish(this.plan);
      this.persist();
    } else if (this.plan.pending?.carried) {
      // The previous daemon asked for the shutdown but was gone before the server went: ask again.
      this.plan = { ...this.plan, pending: { ...this.plan.pending, carried: false } };
    }
    this.reschedule();
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  /** Config reload: the schedules as they are now. */
  reschedule(): void {
    const now = this.clock.now();
    const s = this.host.settings();
    const fire = (expr: string | undefined) => {
      if (expr === undefined) return null;
      try {
        return nextFire(expr, s?.TimeZone, now);
      } catch (err) {
        this.host.log.error('cannot compute the next maintenance time', { schedule: expr, error: describeError(err) });
        return null;
      }
    };
    this.nextRestart = fire(s?.RestartSchedule);
    this.nextCheck = this.host.canCheck() ? fire(s?.UpdateSchedule) : null;
    this.evaluate(null);
  }

  /** `restart?when=…`: a restart at that moment (Now: at once), whatever a hold says. */
  requestRestart(when: MaintenancePolicy): void {
    // Without a running server there is no moment to wait for (nobody plays): as a plain restart, at once.
    if (this.host.serverLive()) this.beginAction('restart', 'request', when);
    else this.host.restart();
  }

  /** `update?when=…`: check now, and carry out a found update with that policy. */
  requestUpdate(when: MaintenancePolicy): void {
    this.updateWhen = when;
    this.host.checkUpdate();
  }

  /** An update check answered (any check: scheduled, requested, a CDN's). */
  updateChecked(available: boolean): void {
    const when = this.updateWhen;
    this.updateWhen = null;
    if (!available) return;
    // Without a server the machine installs it before the next launch, unless a hold makes it wait (installsHeld).
    if (!this.host.serverLive() && !heldAt(this.plan, this.clock.now())) return;
    this.beginAction('update', when === null ? 'update' : 'request', when ?? this.policy());
  }

  /** The server went (asked or not): what was pending for it is done. */
  serverGone(): void {
    const p = this.plan.pending;
    if (p === null) return;
    // A held update was not installed by the relaunch (installsHeld): it waits for the hold's end still.
    if (p.action === 'update' && waitsForHold(this.plan, this.clock.now())) return;
    this.emitDone(kindOf(p), p.forced ? 'forced' : 'done');
    this.plan = finish(this.plan);
    this.persist();
    this.arm();
  }

  hold(ms: number, reason: string): void {
    const now = this.clock.now();
    const fresh = !heldAt(this.plan, now);
    this.plan = hold(this.plan, { now, ms, reason });
    const until = now + ms;
    this.host.log.info('maintenance held', { until: iso(until), reason });
    if (fresh) this.host.bus.emit('maintenance:pending', { key: this.host.key, kind: 'hold', reason, until, at: now });
    this.persist();
    this.evaluate(null);
  }

  /** Ends a hold; false when there was none. */
  release(): boolean {
    if (this.plan.hold === null) return false;
    this.plan = release(this.plan, this.clock.now());
    this.host.log.info('maintenance hold released');
    this.emitDone('hold', 'released');
    this.persist();
    this.evaluate(null);
    return true;
  }

  status(): MaintenanceStatus {
    const schedule = { policy: this.policy(), nextRestart: this.nextRestart, nextCheck: this.nextCheck };
    return maintenanceStatus(this.plan, this.clock.now(), schedule, this.host.staged?.() ?? null);
  }

  /** The server was asked to leave at its round end for a restart (so its clean exit is that restart). */
  leftForRestart(): boolean {
    const p = this.plan.pending;
    return p !== null && p.action === 'restart' && p.asked;
  }

  /** A hold stands, so a relaunch nobody asked for starts the installed build and a found update waits. */
  installsHeld(): boolean {
    return heldAt(this.plan, this.clock.now());
  }

  /** Epoch ms of the next scheduled restart or update check, or null. */
  nextScheduled(): number | null {
    const times = [this.nextRestart, this.nextCheck].filter((t): t is number => t !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  private policy(): MaintenancePolicy {
    return this.host.settings()?.When ?? 'RoundEnd';
  }

  private maxDelayMs(): number {
    return (this.host.settings()?.MaxDelayMinutes ?? 120) * 60_000;
  }

  private beginAction(action: 'restart' | 'update', source: PendingAction['source'], when: MaintenancePolicy): void {
    const before = this.plan.pending;
    this.plan = begin(this.plan, { action, source, when, maxDelayMs: this.maxDelayMs(), now: this.clock.now() });
    const p = this.plan.pending;
    if (p === null || p === before) return;
    if (before !== null) this.emitDone(kindOf(before), 'dropped');
    this.host.log.info(`maintenance ${action} pending`, { when, source, deadline: iso(p.deadline) });
    this.host.bus.emit('maintenance:pending', {
      key: this.host.key,
      kind: kindOf(p),
      when,
      deadline: p.deadline,
      at: p.since,
    });
    this.persist();
    this.evaluate(null);
  }

  private wake(): void {
    this.timer = null;
    if (this.stopped) return;
    const now = this.clock.now();
    const s = this.host.settings();
    if (this.nextRestart !== null && now >= this.nextRestart) {
      this.nextRestart = s?.RestartSchedule ? nextFire(s.RestartSchedule, s.TimeZone, now) : null;
      if (this.host.serverLive()) this.beginAction('restart', 'schedule', this.policy());
      else this.host.log.info('scheduled restart skipped: no server is running');
    }
    if (this.nextCheck !== null && now >= this.nextCheck) {
      this.nextCheck = s?.UpdateSchedule ? nextFire(s.UpdateSchedule, s.TimeZone, now) : null;
      this.host.checkUpdate();
    }
    this.evaluate(null);
  }

  /** Looks at the plan now, with the player count of a poll that just answered (null: none). */
  private evaluate(players: number | null): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const expired = expire(this.plan, now);
    if (expired.expired) {
      this.plan = expired.plan;
      this.host.log.info('maintenance hold ran out');
      this.emitDone('hold', 'expired');
      this.persist();
    }
    const next = nextStep(this.plan, now, players);
    if (next.plan !== this.plan) {
      this.plan = next.plan;
      this.persist();
    }
    if (next.step !== null) this.carryOut(next.step);
    else if (players === null && needsPlayers(this.plan, now) && !this.polling) this.poll();
    this.arm();
  }

  private poll(): void {
    this.polling = true;
    this.host.players().then(
      (n) => {
        this.polling = false;
        this.evaluate(n);
      },
      () => {
        this.polling = false;
      },
    );
  }

  private carryOut(step: Step): void {
    const { log } = this.host;
    if (step.type === 'shutdown') {
      log.info(
        step.forced ? 'maintenance deadline reached; restarting the server' : 'maintenance: restarting the server',
      );
      this.host.restart();
      return;
    }
    log.info('maintenance: asking the server to leave at the end of its round (POST /update)');
    void this.host.askLeave().then((ok) => {
      if (ok || this.stopped || this.plan.pending === null) return;
      log.warn('the server did not take POST /update; restarting it now instead');
      this.plan = { ...this.plan, pending: { ...this.plan.pending, carried: true } };
      this.persist();
      this.host.restart();
    });
  }

  private arm(): void {
    this.disarm();
    if (this.stopped) return;
    const now = this.clock.now();
    const times = [this.nextRestart, this.nextCheck, wakeAt(this.plan)].filter((t): t is number => t !== null);
    if (needsPlayers(this.plan, now)) times.push(now + this.host.pollMs());
    if (times.length === 0) return;
    const ms = Math.min(Math.max(0, Math.min(...times) - now), MAX_TIMER_MS);
    this.timer = this.clock.setTimeout(() => this.wake(), ms);
  }

  private disarm(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private emitDone(kind: MaintenanceKind, how: 'done' | 'forced' | 'released' | 'expired' | 'dropped'): void {
    this.host.bus.emit('maintenance:done', { key: this.host.key, kind, how, at: this.clock.now() });
  }

  private persist(): void {
    this.host
      .save(this.plan)
      .catch((err: unknown) =>
        this.host.log.warn('could not keep the maintenance plan in data.json', { error: describeError(err) }),
      );
  }
}
