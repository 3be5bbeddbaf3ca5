/** `Servers.Instances.<key>.Maintenance`: when an instance is restarted and checked for updates, and how. */
import * as v from 'valibot';
import { cronProblem, timeZoneProblem } from '../cron.ts';

export const MAINTENANCE_POLICIES = ['Now', 'RoundEnd', 'Empty'] as const;
export type MaintenancePolicy = (typeof MAINTENANCE_POLICIES)[number];
/** The longest wait in minutes that a Node timer can keep (2^31-1 ms, about 24 days). */
export const MAX_DELAY_MINUTES = 35_791;

export const Cron = v.pipe(
  v.string('expected a cron schedule such as "0 6 * * *"'),
  v.check(
    (s) => cronProblem(s) === null,
    (issue) => cronProblem(String(issue.input)) ?? 'expected a cron schedule',
  ),
);

export const TimeZone = v.pipe(
  v.string('expected an IANA time zone name such as Europe/Berlin'),
  v.check(
    (s) => timeZoneProblem(s) === null,
    (issue) => timeZoneProblem(String(issue.input)) ?? 'expected an IANA time zone name',
  ),
);

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
      v.pipe(
        v.number('expected a number of minutes'),
        v.gtValue(0, 'expected a positive number of minutes'),
        // The deadline becomes a timer: keep it within the longest one (about 24 days).
        v.maxValue(
          MAX_DELAY_MINUTES,
          `expected at most ${MAX_DELAY_MINUTES} minutes (about 24 days, the longest timer)`,
        ),
      ),
      120,
    ),
  },
  'expected a map of maintenance settings (RestartSchedule, UpdateSchedule, TimeZone, When, MaxDelayMinutes)',
);

export type MaintenanceSettings = v.InferOutput<typeof MaintenanceSchema>;
