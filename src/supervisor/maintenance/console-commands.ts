/**
 * Console commands on the maintenance schedules (`Maintenance.Announcements`, `Maintenance.Commands`): an in-game
 * warning `MinutesBefore` each scheduled restart, and commands on schedules of their own. One timer per entry,
 * re-armed after each fire; a wait longer than a Node timer can keep wakes early and arms again.
 */
import { nextFire } from '../../config/cron.ts';
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { realClock, type TimerClock } from '../timer-clock.ts';

/** The longest a Node timer waits (about 24 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Entry {
  command: string;
  /** Why it is sent, for the log and the audit line: `announcement before the scheduled restart`, `schedule 0 * * * *`. */
  why: string;
  /** When it is next due after `from` (epoch ms), or null when never. */
  next: (from: number) => number | null;
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
  const zone = m.TimeZone;
  const restart = m.RestartSchedule;
  const announcements = restart
    ? m.Announcements.map(({ MinutesBefore, Command }) => {
        const lead = MinutesBefore * 60_000;
        return {
          command: Command,
          why: `announcement ${MinutesBefore} min before the scheduled restart`,
          announcement: true,
          // The first restart far enough ahead that its announcement is still to come.
          next: (from: number) => {
            const fire = nextFire(restart, zone, from + lead);
            return fire === null ? null : fire - lead;
          },
        };
      })
    : [];
  const commands = m.Commands.map(({ Schedule, Command }) => ({
    command: Command,
    why: `schedule ${Schedule}`,
    announcement: false,
    next: (from: number) => nextFire(Schedule, zone, from),
  }));
  return [...announcements, ...commands];
}

export function createScheduledCommands(opts: ScheduledCommandsOptions) {
  const clock = opts.clock ?? realClock;
  let timers: unknown[] = [];

  const arm = (slot: number, entry: Entry, from: number) => {
    let due: number | null;
    try {
      due = entry.next(from);
    } catch (err) {
      opts.broken(entry.why, err);
      return;
    }
    if (due === null) return;
    const at = due;
    timers[slot] = clock.setTimeout(
      () => {
        if (clock.now() < at) return arm(slot, entry, from);
        if (!(entry.announcement && opts.held())) opts.send(entry.command, entry.why);
        arm(slot, entry, at + 1);
      },
      Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS),
    );
  };

  const stop = () => {
    for (const t of timers) if (t !== undefined) clock.clearTimeout(t);
    timers = [];
  };

  const start = () => {
    stop();
    entriesOf(opts.settings()).forEach((entry, slot) => {
      arm(slot, entry, clock.now());
    });
  };

  /** Re-reads the settings (a config reload). */
  return { start, stop, reschedule: start };
}

export type ScheduledCommands = ReturnType<typeof createScheduledCommands>;
