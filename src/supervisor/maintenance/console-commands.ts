/**
 * Console commands on the maintenance schedules (`Maintenance.Announcements`, `Maintenance.Commands`): an in-game
 * warning `MinutesBefore` each scheduled restart, and commands on schedules of their own; one cron timer per entry.
 */
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { type CronTimer, cronTimer, type TimerClock } from '../cron-timer.ts';

interface Entry {
  command: string;
  /** Why it is sent, for the log and the audit line: `announcement before the scheduled restart`, `schedule 0 * * * *`. */
  why: string;
  schedule: string;
  /** How long before each time of `schedule` it is sent. */
  leadMs: number;
  /** Before a scheduled restart: not sent while a hold keeps that restart back. */
  announcement: boolean;
}

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

function entriesOf(m: MaintenanceSettings | undefined): Entry[] {
  if (!m) return [];
  const restart = m.RestartSchedule;
  const announcements = restart
    ? m.Announcements.map(({ MinutesBefore, Command }) => ({
        command: Command,
        why: `announcement ${MinutesBefore} min before the scheduled restart`,
        schedule: restart,
        leadMs: MinutesBefore * 60_000,
        announcement: true,
      }))
    : [];
  const commands = m.Commands.map(({ Schedule, Command }) => ({
    command: Command,
    why: `schedule ${Schedule}`,
    schedule: Schedule,
    leadMs: 0,
    announcement: false,
  }));
  return [...announcements, ...commands];
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
    timers = entriesOf(m).map((entry) =>
      cronTimer({
        schedule: entry.schedule,
        timeZone: m?.TimeZone,
        leadMs: entry.leadMs,
        fire: () => {
          if (!(entry.announcement && opts.held())) opts.send(entry.command, entry.why);
        },
        broken: (err) => opts.broken(entry.why, err),
        clock: opts.clock,
      }),
    );
  };

  /** Re-reads the settings (a config reload). */
  return { start, stop, reschedule: start };
}

export type ScheduledCommands = ReturnType<typeof createScheduledCommands>;
