/** When an instance's `RestartSchedule` next fires and its `UpdateSchedule` next asks for a check (croner). */
import { nextFire } from '../config/cron.ts';
import { describeError } from '../errors.ts';
import type { MaintenanceHost } from './maintenance-types.ts';

export class MaintenanceSchedule {
  /** Epoch ms, or null when there is no such schedule (or it never fires again). */
  nextRestart: number | null = null;
  nextCheck: number | null = null;

  constructor(private readonly host: Pick<MaintenanceHost, 'settings' | 'canCheck' | 'log'>) {}

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

  /** The times to wake up for. */
  times(): number[] {
    return [this.nextRestart, this.nextCheck].filter((t): t is number => t !== null);
  }

  /** The earliest of them, or null. */
  next(): number | null {
    const times = this.times();
    return times.length === 0 ? null : Math.min(...times);
  }
}
