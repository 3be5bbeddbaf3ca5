/** `Servers.Instances.<key>.Backups` and `.Retention`: snapshots of an instance's data, and how long things are kept. */
import * as v from 'valibot';
import { amount, text } from '../numbers.ts';
import { Cron, TimeZone } from './maintenance.ts';

const Count = (def: number) => v.optional(amount('items', { whole: true, min: 0, max: 10_000 }), def);
const NonNegative = (def: number, unit: string) => v.optional(amount(unit, { min: 0 }), def);

export const BackupsSchema = v.strictObject(
  {
    /** A snapshot before every install; false skips it (an update then never waits for, or fails on, a snapshot). */
    BeforeUpdate: v.optional(v.boolean('expected true or false'), true),
    /** Snapshots of the running server on a cron schedule. */
    Schedule: v.optional(Cron),
    /** Absent: the host's time zone. */
    TimeZone: v.optional(TimeZone),
    /**
     * Runs after each snapshot with its path in WATCHDOG_BACKUP_PATH (rclone, rsync, restic, aws): a program and its
     * arguments, no shell. Its exit status and the end of its output are reported.
     */
    AfterCommand: v.optional(
      v.pipe(
        v.array(v.string('expected a string'), 'expected a list: the program, then its arguments'),
        v.minLength(1, 'expected at least the program'),
      ),
    ),
    AfterCommandTimeoutSeconds: v.optional(amount('seconds', { positive: true }), 600),
    /** The `sqlite3` program that copies SQLite databases with the online backup. */
    Sqlite3Path: v.optional(text('a program'), 'sqlite3'),
    /** Kept free on the disk beyond twice the data's size before a snapshot begins. */
    SpaceMarginMegabytes: NonNegative(64, 'megabytes'),
  },
  'expected a map of backup settings (BeforeUpdate, Schedule, TimeZone, AfterCommand, Sqlite3Path, …)',
);

/** One retention rule: the newest `Keep`, anything younger than `KeepDays`, then at most `MaxSizeGB` together. */
const Rule = (keep: number, keepDays: number, maxSizeGB: number) =>
  v.strictObject(
    { Keep: Count(keep), KeepDays: NonNegative(keepDays, 'days'), MaxSizeGB: NonNegative(maxSizeGB, 'gigabytes') },
    'expected a map with Keep, KeepDays and MaxSizeGB',
  );

/** What the daemon keeps piling up per instance, bounded by one rule each. The newest item is always kept. */
export const RetentionSchema = v.strictObject(
  {
    Backups: v.optional(Rule(10, 14, 10), {}),
    Dumps: v.optional(Rule(3, 0, 4), {}),
    /**
     * Rotated server logs (server.log.1 …), within the cap of `Logs.ServerLogFiles` × `Logs.ServerLogMaxBytes`.
     * Absent: the cap alone decides.
     */
    Logs: v.optional(Rule(4, 0, 1000)),
  },
  'expected a map of retention rules (Backups, Dumps, Logs)',
);

export type BackupsSettings = v.InferOutput<typeof BackupsSchema>;
export type RetentionSettings = v.InferOutput<typeof RetentionSchema>;
