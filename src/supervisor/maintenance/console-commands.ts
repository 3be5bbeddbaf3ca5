/**
 * Console commands on the maintenance schedules (`Maintenance.Announcements`, `Maintenance.Commands`): an in-game
 * warning `MinutesBefore` each scheduled restart, and commands on schedules of their own; one cron timer per entry.
 */
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { type CronTimer, cronTimer, type TimerClock } from '../cron-timer.ts';

export interface ScheduledCommandsOptions {
  settings: () => MaintenanceSettings | undefined;
  /** Sends one command; the caller reports how it went. */
  send: (command: string, why: string) => void;
  /** A hold stands: an announcement of a restart the hold keeps back would be wrong. */
  held: () => boolean;
  /** A schedule that cannot be computed (a time zone gone from the system): told once per arming. */
  broken: (why: string, error: unknown) => void;
  clock?: TimerClock;
}

export function createScheduledCommands(opts: ScheduledCommandsOptions) {
  let timers: CronTimer[] = [];

  const stop = () => {
    for (const t of timers) t.stop();
    timers = [];
  };

  const start = () => {
    stop();
    const m = opts.settings();
    if (!m) return;
    /** `why` is for the log and the audit line; an announcement is not sent while a hold keeps its restart back. */
    const timer = (schedule: string, command: string, why: string, leadMs = 0, announcement = false) =>
      cronTimer({
        schedule,
        timeZone: m.TimeZone,
        leadMs,
        fire: () => {
          if (!(announcement && opts.held())) opts.send(command, why);
        },
        broken: (err) => opts.broken(why, err),
        clock: opts.clock,
      });
    const restart = m.RestartSchedule;
    const announcements = restart
      ? m.Announcements.map(({ MinutesBefore: min, Command }) =>
          timer(restart, Command, `announcement ${min} min before the scheduled restart`, min * 60_000, true),
        )
      : [];
    timers = [...announcements, ...m.Commands.map((c) => timer(c.Schedule, c.Command, `schedule ${c.Schedule}`))];
  };

  /** Re-reads the settings (a config reload). */
  return { start, stop, reschedule: start };
}

export type ScheduledCommands = ReturnType<typeof createScheduledCommands>;
