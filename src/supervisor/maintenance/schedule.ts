/**
 * An instance's `RestartSchedule` and `UpdateSchedule` (croner) as the `maintenanceSchedule` actor of its statechart:
 * it sends MAINTAIN {source: 'schedule'} and UPDATE_CHECK as they fire, and computes them again on RESCHEDULE (a
 * config reload). The next times are kept where the status reads them.
 */

import { fromCallback } from 'xstate';
import type { PlayersInput, ScheduleCommand } from '../../../machines/instance.actors.types.ts';
import { nextFire } from '../../config/cron.ts';
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { describeError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { realClock, type TimerClock } from '../timer-clock.ts';

export interface ScheduleHost {
  settings(): MaintenanceSettings | undefined;
  /** An update provider is configured, so UpdateSchedule has something to ask. */
  canCheck(): boolean;
  log: Logger;
}

/** Node's longest timer; a later time is reached by waking up early and arming again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class MaintenanceSchedule {
  /** Epoch ms, or null when there is no such schedule (or it never fires again). */
  nextRestart: number | null = null;
  nextCheck: number | null = null;

  constructor(private readonly host: ScheduleHost) {}

  /** The schedules as the settings say now (at start and on a config reload). */
  compute(now: number): void {
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
  }

  /** Which schedules are due at `now`; each due one moves on to its next fire. */
  due(now: number): { restart: boolean; check: boolean } {
    const s = this.host.settings();
    const restart = this.nextRestart !== null && now >= this.nextRestart;
    if (restart) this.nextRestart = s?.RestartSchedule ? nextFire(s.RestartSchedule, s.TimeZone, now) : null;
    const check = this.nextCheck !== null && now >= this.nextCheck;
    if (check) this.nextCheck = s?.UpdateSchedule ? nextFire(s.UpdateSchedule, s.TimeZone, now) : null;
    return { restart, check };
  }

  /** The earliest of the next fires, or null. */
  next(): number | null {
    const times = [this.nextRestart, this.nextCheck].filter((t): t is number => t !== null);
    return times.length === 0 ? null : Math.min(...times);
  }
}

/** The actor: one timer at a time, at the schedule's next fire. */
export function createScheduleActor(schedule: MaintenanceSchedule, clock: TimerClock = realClock) {
  return fromCallback<ScheduleCommand, PlayersInput>(({ sendBack, receive }) => {
    let timer: unknown = null;
    const arm = () => {
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      const next = schedule.next();
      if (next === null) return;
      timer = clock.setTimeout(wake, Math.min(Math.max(0, next - clock.now()), MAX_TIMER_MS));
    };
    const wake = () => {
      timer = null;
      const at = clock.now();
      const due = schedule.due(at);
      if (due.restart) sendBack({ type: 'MAINTAIN', source: 'schedule', at });
      if (due.check) sendBack({ type: 'UPDATE_CHECK' });
      arm();
    };
    schedule.compute(clock.now());
    arm();
    receive(() => {
      schedule.compute(clock.now());
      arm();
    });
    return () => {
      if (timer !== null) clock.clearTimeout(timer);
    };
  });
}
