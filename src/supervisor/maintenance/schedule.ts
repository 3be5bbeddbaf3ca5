/** `RestartSchedule` and `UpdateSchedule` as the `maintenanceSchedule` actor, armed again on RESCHEDULE. */

import { fromCallback } from 'xstate';
import type { PlayersInput, ScheduleCommand } from '../../../machines/instance.setup.ts';
import type { Stamp } from '../../../machines/instance.types.ts';
import { stampNow } from '../../clock.ts';
import type { MaintenanceSettings } from '../../config/sections/maintenance.ts';
import { describeError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { type CronTimer, cronTimer, realClock, type TimerClock } from '../cron-timer.ts';

export interface ScheduleHost {
  settings(): MaintenanceSettings | undefined;
  canCheck(): boolean;
  log: Logger;
}

/** `stamp` dates the MAINTAIN a fire sends (a test gives its simulated clock to both). */
export function createMaintenanceSchedule(
  host: ScheduleHost,
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
