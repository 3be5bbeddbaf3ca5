import * as v from 'valibot';
import { amount, seconds, text } from '../numbers.ts';
import { OidcSchema } from './oidc.ts';

const Minutes = (def: number) =>
  v.optional(
    amount('minutes', { positive: true, max: 365 * 24 * 60, tooBig: 'expected at most a year of minutes' }),
    def,
  );
const HeaderName = v.pipe(
  v.string('expected a header name'),
  v.regex(/^[A-Za-z0-9-]{1,64}$/, 'expected a header name (letters, digits and "-")'),
);
const Count = (unit: string, def: number, min: number, max: number) =>
  v.optional(amount(unit, { whole: true, min, max }), def);

/** `Users`: the users file and the dashboard's logins; a reload applies at once, to open sessions too. */
export const UsersSchema = v.strictObject(
  {
    File: v.optional(text('a file path')),
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
    // Single sign-on from a reverse proxy listed in TrustedProxies (Authelia, Authentik): the headers naming the
    // user it logged in and that user's groups (comma-separated; `Groups:` in the users file gives them rights).
    TrustedHeaders: v.optional(
      v.strictObject(
        { User: v.optional(HeaderName, 'Remote-User'), Groups: v.optional(HeaderName, 'Remote-Groups') },
        'expected a map with User and Groups (header names)',
      ),
    ),
    // Dashboard login through an OpenID Connect provider (Keycloak, Authentik): off unless set.
    Oidc: v.optional(OidcSchema),
  },
  'expected a map with File, SessionMinutes, SessionIdleMinutes, MaxSessions, the Login… limits, TrustedHeaders and Oidc',
);
