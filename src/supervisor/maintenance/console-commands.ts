/** `Maintenance.Announcements` before each scheduled restart and `Maintenance.Commands`: one cron timer per entry. */
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { type CronTimer, cronTimer, type TimerClock } from '../cron-timer.ts';

export interface ScheduledCommandsOptions {
  settings: () => MaintenanceSettings | undefined;
  send: (command: string, why: string) => void;
  /** An announcement of a restart a hold keeps back would be wrong. */
  held: () => boolean;
  /** A schedule that cannot be computed: told once per arming. */
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

  return { start, stop, reschedule: start };
}
