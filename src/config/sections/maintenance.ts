/** `Servers.Instances.<key>.Maintenance`: when an instance is restarted and checked for updates, and how. */
import * as v from 'valibot';
import { MAINTENANCE_POLICIES } from '../../../machines/instance.types.ts';
import { cronProblem, timeZoneProblem } from '../cron.ts';
import { type ConfigPath, isMap, type ReportProblem } from '../merge.ts';
import { amount, checkedText, text } from '../numbers.ts';
import { commandProblem } from './console-hub.ts';

/** The longest wait in minutes that a Node timer can keep (2^31-1 ms, about 24 days). */
export const MAX_DELAY_MINUTES = 35_791;

export const Cron = checkedText('expected a cron schedule such as "0 6 * * *"', cronProblem);
export const TimeZone = checkedText('expected an IANA time zone name such as Europe/Berlin', timeZoneProblem);

/** A console command line (one line, no control characters; the console's own check says more at load). */
const Command = text('a console command');

export const MaintenanceSchema = v.strictObject(
  {
    RestartSchedule: v.optional(Cron),
    /** Periodic update checks; only for an instance with an UpdateType. */
    UpdateSchedule: v.optional(Cron),
    /** Absent: the host's time zone. */
    TimeZone: v.optional(TimeZone),
    When: v.optional(
      v.picklist(MAINTENANCE_POLICIES, `expected one of ${MAINTENANCE_POLICIES.join(', ')}`),
      'RoundEnd',
    ),
    MaxDelayMinutes: v.optional(
      // The deadline becomes a timer: keep it within the longest one.
      amount('minutes', {
        positive: true,
        max: MAX_DELAY_MINUTES,
        tooBig: `expected at most ${MAX_DELAY_MINUTES} minutes (about 24 days, the longest timer)`,
      }),
      120,
    ),
    /** Console commands sent before each RestartSchedule fire (an in-game warning); needs the instance's Console. */
    Announcements: v.optional(
      v.array(
        v.strictObject(
          {
            MinutesBefore: amount('minutes', { positive: true, max: MAX_DELAY_MINUTES }),
            Command,
          },
          'expected a map with MinutesBefore and Command',
        ),
        'expected a list of announcements (each MinutesBefore and Command)',
      ),
      [],
    ),
    /** Console commands sent on schedules of their own; needs the instance's Console. */
    Commands: v.optional(
      v.array(
        v.strictObject({ Schedule: Cron, Command }, 'expected a map with Schedule and Command'),
        'expected a list of scheduled commands (each Schedule and Command)',
      ),
      [],
    ),
  },
  'expected a map of maintenance settings (RestartSchedule, UpdateSchedule, TimeZone, When, MaxDelayMinutes, Announcements, Commands)',
);

export type MaintenanceSettings = v.InferOutput<typeof MaintenanceSchema>;

/** `Maintenance.Announcements` and `.Commands` go to the console: refused without `Console` or as it would refuse. */
export function checkScheduledCommands(
  base: ConfigPath,
  inst: Record<string, unknown>,
  consoleOn: boolean,
  problem: ReportProblem,
): void {
  const m = inst.Maintenance;
  if (!isMap(m)) return;
  for (const list of ['Announcements', 'Commands'] as const) {
    const entries = Array.isArray(m[list]) ? m[list] : [];
    entries.forEach((entry: unknown, i: number) => {
      if (!isMap(entry) || typeof entry.Command !== 'string') return;
      const path = [...base, 'Maintenance', list, i, 'Command'];
      if (!consoleOn)
        problem(path, 'expected the instance to have Console: true (the command goes to its console)', entry.Command);
      const why = commandProblem(entry.Command);
      if (why !== null) problem(path, `expected a console command line: ${why}`, entry.Command);
    });
  }
}
