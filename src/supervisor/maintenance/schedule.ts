import { fromCallback } from 'xstate';
import type { PlayersInput, ScheduleCommand } from '../../../machines/instance.setup.ts';
import type { Stamp } from '../../../machines/instance.types.ts';
import { stampNow } from '../../clock.ts';
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { describeError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { type CronTimer, cronTimer, realClock, type TimerClock } from '../cron-timer.ts';

/** `RestartSchedule` and `UpdateSchedule` as the `maintenanceSchedule` actor; `stamp` dates the MAINTAIN it sends. */
export function createMaintenanceSchedule(
  host: { settings(): MaintenanceSettings | undefined; canCheck(): boolean; log: Logger },
  clock: TimerClock = realClock,
  stamp: () => Stamp = stampNow,
) {
  let restart: CronTimer | null = null;
  let check: CronTimer | null = null;
  const stop = () => {
    restart?.stop();
    check?.stop();
  };
  const actor = fromCallback<ScheduleCommand, PlayersInput>(({ sendBack, receive }) => {
    const arm = () => {
      stop();
      const s = host.settings();
      const timer = (schedule: string | undefined, fire: () => void) =>
        schedule === undefined
          ? null
          : cronTimer({
              schedule,
              timeZone: s?.TimeZone,
              fire,
              broken: (err) =>
                host.log.error('cannot compute the next maintenance time', { schedule, error: describeError(err) }),
              clock,
            });
      restart = timer(s?.RestartSchedule, () => sendBack({ type: 'MAINTAIN', source: 'schedule', at: stamp() }));
      check = host.canCheck() ? timer(s?.UpdateSchedule, () => sendBack({ type: 'UPDATE_CHECK' })) : null;
    };
    arm();
    receive(arm);
    return stop;
  });
  return {
    actor,
    /** Epoch ms, or null when not set (or never again). */
    next: () => ({ nextRestart: restart?.next ?? null, nextCheck: check?.next ?? null }),
  };
}

export type MaintenanceSchedule = ReturnType<typeof createMaintenanceSchedule>;

/** `Maintenance.Announcements` before each scheduled restart and `Maintenance.Commands`: one cron timer per entry. */
export function createScheduledCommands(opts: {
  settings: () => MaintenanceSettings | undefined;
  send: (command: string, why: string) => void;
  /** An announcement of a restart a hold keeps back would be wrong. */
  held: () => boolean;
  broken: (why: string, error: unknown) => void;
  clock?: TimerClock;
}) {
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

  return { start, stop };
}
