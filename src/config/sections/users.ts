import * as v from 'valibot';
import { amount, seconds } from '../numbers.ts';

const Minutes = (def: number) =>
  v.optional(
    amount('minutes', { positive: true, max: 365 * 24 * 60, tooBig: 'expected at most a year of minutes' }),
    def,
  );
const Count = (unit: string, def: number, min: number, max: number) =>
  v.optional(amount(unit, { whole: true, min, max }), def);

/**
 * `Users`: the users file, and the dashboard's logins (src/auth/sessions.ts, login-limits.ts). Every timeout is
 * here; a reload applies them at once, to sessions already open too.
 */
export const UsersSchema = v.strictObject(
  {
    File: v.optional(v.pipe(v.string('expected a file path'), v.minLength(1, 'expected a file path'))),
    // A session ends this long after its login, and this long after its last request.
    SessionMinutes: Minutes(12 * 60),
    SessionIdleMinutes: Minutes(60),
    MaxSessions: Count('sessions', 1000, 1, 1_000_000),
    // Per source address: this many login attempts at once, refilled at this many a minute.
    LoginAttemptsPerMinute: Count('attempts', 10, 1, 10_000),
    // Per account: wrong passwords in a row before a lockout, its first length, and the most it doubles to.
    LoginFailuresBeforeLockout: Count('failures', 5, 0, 1000),
    LoginLockoutSeconds: seconds(10),
    LoginLockoutMaxSeconds: seconds(300),
  },
  'expected a map with File, SessionMinutes, SessionIdleMinutes, MaxSessions and the Login… limits',
);

export type UsersSettings = v.InferOutput<typeof UsersSchema>;
