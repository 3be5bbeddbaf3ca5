/**
 * Carries out one instance's maintenance: wakes up for the `RestartSchedule` and `UpdateSchedule`
 * (maintenance-schedule.ts) and for deadlines and hold ends, polls the server's player count for `When: Empty`
 * (maintenance-timers.ts), and asks the server to leave at round end or restarts it. The plan, kept in data.json
 * and told on the bus, is maintenance-book.ts; the decisions are the pure functions of maintenance-plan.ts.
 */
import type { MaintenancePolicy } from '../config/sections/maintenance.ts';
import type { MaintenanceStatus } from './contract.ts';
import { MaintenanceBook } from './maintenance-book.ts';
import { type MaintenancePlan, needsPlayers, type PendingAction, type Step, wakeAt } from './maintenance-plan.ts';
import { MaintenanceSchedule } from './maintenance-schedule.ts';
import { maintenanceStatus } from './maintenance-status.ts';
import { PlayerPoll, realClock, Waker } from './maintenance-timers.ts';
import type { Clock, MaintenanceHost } from './maintenance-types.ts';

export class Maintenance {
  private readonly clock: Clock;
  private readonly book: MaintenanceBook;
  private readonly schedule: MaintenanceSchedule;
  private readonly waker: Waker;
  private readonly poll: PlayerPoll;
  /** The policy an update asked for with `?when=` applies to the check it started. */
  private updateWhen: MaintenancePolicy | null = null;
  private stopped = false;

  constructor(private readonly host: MaintenanceHost) {
    this.clock = host.clock ?? realClock;
    this.book = new MaintenanceBook(host, this.clock);
    this.schedule = new MaintenanceSchedule(host);
    this.waker = new Waker(this.clock, () => this.wake());
    this.poll = new PlayerPoll(
      () => host.players(),
      (n) => this.evaluate(n),
    );
  }

  /** Takes up the plan the previous daemon left (see `MaintenanceBook.takeUp`) and arms the schedules. */
  start(saved: MaintenancePlan | null, adopted: boolean): void {
    this.book.takeUp(saved, adopted);
    this.reschedule();
  }

  stop(): void {
    this.stopped = true;
    this.waker.disarm();
  }

  /** Config reload: the schedules as they are now. */
  reschedule(): void {
    this.schedule.compute(this.clock.now());
    this.evaluate(null);
  }

  /**
   * `restart?when=…`: a restart at that moment (Now: at once), whatever a hold says. `reason` (the daemon's own
   * request, such as a memory limit) goes with its chat notice.
   */
  requestRestart(when: MaintenancePolicy, reason?: string): void {
    // Without a running server there is no moment to wait for (nobody plays): as a plain restart, at once.
    if (this.host.serverLive()) this.beginAction('restart', 'request', when, reason);
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
    if (!this.host.serverLive() && !this.book.held()) return;
    this.beginAction('update', when === null ? 'update' : 'request', when ?? this.policy());
  }

  /**
   * A server was launched. With a found update still pending, the machine kept it on the installed build because of
   * a hold (installsHeld): the update waits for the hold's end like any found update. Without one, a held update
   * kept across the server's exit was installed on the way (a person's restart): it is done.
   */
  launched(updatePending: boolean): void {
    if (updatePending) {
      if (this.book.held()) this.beginAction('update', 'update', this.policy());
    } else if (this.book.plan.pending?.action === 'update' && this.book.finish(true)) this.arm();
  }

  /** The server went (asked or not): what was pending for it is done. */
  serverGone(): void {
    if (this.book.finish()) this.arm();
  }

  hold(ms: number, reason: string): void {
    this.book.hold(ms, reason);
    this.evaluate(null);
  }

  /** Ends a hold; false when there was none. */
  release(): boolean {
    if (!this.book.release()) return false;
    this.evaluate(null);
    return true;
  }

  status(): MaintenanceStatus {
    const { nextRestart, nextCheck } = this.schedule;
    const schedule = { policy: this.policy(), nextRestart, nextCheck };
    return maintenanceStatus(this.book.plan, this.clock.now(), schedule, this.host.staged?.() ?? null);
  }

  /** The server was asked to leave at its round end for a restart (so its clean exit is that restart). */
  leftForRestart(): boolean {
    const p = this.book.plan.pending;
    return p !== null && p.action === 'restart' && p.asked;
  }

  /** A hold stands, so a relaunch nobody asked for starts the installed build and a found update waits. */
  installsHeld(): boolean {
    return this.book.held();
  }

  /** Epoch ms of the next scheduled restart or update check, or null. */
  nextScheduled(): number | null {
    return this.schedule.next();
  }

  private policy(): MaintenancePolicy {
    return this.host.settings()?.When ?? 'RoundEnd';
  }

  private beginAction(
    action: 'restart' | 'update',
    source: PendingAction['source'],
    when: MaintenancePolicy,
    reason?: string,
  ): void {
    if (this.book.begin(action, source, when, reason)) this.evaluate(null);
  }

  private wake(): void {
    if (this.stopped) return;
    const due = this.schedule.due(this.clock.now());
    if (due.restart) {
      if (this.host.serverLive()) this.beginAction('restart', 'schedule', this.policy());
      else this.host.log.info('scheduled restart skipped: no server is running');
    }
    if (due.check) this.host.checkUpdate();
    this.evaluate(null);
  }

  /** Looks at the plan now, with the player count of a poll that just answered (null: none). */
  private evaluate(players: number | null): void {
    if (this.stopped) return;
    const step = this.book.step(players);
    if (step !== null) this.carryOut(step);
    else if (players === null && needsPlayers(this.book.plan, this.clock.now())) this.poll.start();
    this.arm();
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
      if (ok || this.stopped || !this.book.carried()) return;
      log.warn('the server did not take POST /update; restarting it now instead');
      this.host.restart();
    });
  }

  /** The timer, at the next schedule, deadline or hold end, or the next poll of the player count. */
  private arm(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const times = [...this.schedule.times(), wakeAt(this.book.plan)].filter((t): t is number => t !== null);
    if (needsPlayers(this.book.plan, now)) times.push(now + this.host.pollMs());
    this.waker.arm(times);
  }
}
