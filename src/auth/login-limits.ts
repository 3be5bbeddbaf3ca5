import { setCapped } from '../capped-map.ts';
import { monotonicMs } from '../clock.ts';

/** Why a login is not even tried: its source used up its attempts, or its account is locked for now. */
export type LoginBlock = { reason: 'limited' | 'locked'; retryAfterMs: number };

export type LoginLimits = ReturnType<typeof createLoginLimits>;

/**
 * `Users.LoginAttemptsPerMinute`, `.LoginFailuresBeforeLockout`, `.LoginLockoutSeconds` and `…MaxSeconds`, with the
 * schema's defaults: 10 attempts a minute, 5 free failures, 10 s doubling to 5 min.
 */
export const DEFAULT_LOGIN_LIMITS = { perMinute: 10, freeFailures: 5, lockoutMs: 10_000, maxLockoutMs: 300_000 };
export type LoginLimitSettings = typeof DEFAULT_LOGIN_LIMITS;

interface Account {
  failures: number;
  lockedUntil: number;
  lastFailureAt: number;
  /** Sources that logged in to it lately: a lockout a stranger caused does not apply to them. */
  knownSources: string[];
}

/** Entries kept per map; a stranger inventing names or addresses pushes out the oldest, never grows memory. */
const MAX_ENTRIES = 10_000;
const KNOWN_SOURCES = 8;
/** Failures older than this are forgotten: a typo a day never adds up to a lockout. */
const FAILURES_FORGOTTEN_MS = 15 * 60_000;

/**
 * Login attempts limited two ways. Per source (an address, an IPv6 /64): a token bucket, so one client cannot try
 * passwords quickly. Per account: after `freeFailures` wrong ones in a row, a lockout of `lockoutMs` that doubles
 * with each further failure up to `maxLockoutMs`; attempts during it are refused unchecked and do not extend it.
 * A source that logged in to the account before is not held by its lockout, so a stranger failing on purpose
 * delays only new places, and never for longer than the cap. `now` is a monotonic clock in ms.
 */
export function createLoginLimits(settings: () => LoginLimitSettings, now: () => number = monotonicMs) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const accounts = new Map<string, Account>();
  return {
    /** Takes one attempt from the source's bucket and checks the account; null when the password may be checked. */
    admit(source: string, account: string): LoginBlock | null {
      const set = settings();
      const t = now();
      const capacity = Math.max(1, set.perMinute);
      const b = buckets.get(source) ?? { tokens: capacity, at: t };
      b.tokens = Math.min(capacity, b.tokens + ((t - b.at) * capacity) / 60_000);
      b.at = t;
      setCapped(buckets, source, b, MAX_ENTRIES);
      if (b.tokens < 1) return { reason: 'limited', retryAfterMs: Math.ceil(((1 - b.tokens) * 60_000) / capacity) };
      b.tokens -= 1;
      const a = accounts.get(account);
      if (a && a.lockedUntil > t && !a.knownSources.includes(source))
        return { reason: 'locked', retryAfterMs: a.lockedUntil - t };
      return null;
    },
    /** A wrong password (or unknown user) for `account`. */
    failed(account: string): void {
      const set = settings();
      const t = now();
      const a = accounts.get(account) ?? { failures: 0, lockedUntil: 0, lastFailureAt: t, knownSources: [] };
      if (t - a.lastFailureAt >= FAILURES_FORGOTTEN_MS) a.failures = 0;
      a.failures += 1;
      a.lastFailureAt = t;
      const over = a.failures - Math.max(0, set.freeFailures);
      if (over > 0) {
        // 2^(over-1) × the first lockout, computed without overflowing for a long run of failures.
        const doubled = set.lockoutMs * 2 ** Math.min(over - 1, 30);
        a.lockedUntil = t + Math.min(set.maxLockoutMs, doubled);
      }
      setCapped(accounts, account, a, MAX_ENTRIES);
    },
    /** A good one: the account's failures are forgotten, and `source` may log in through a later lockout. */
    succeeded(source: string, account: string): void {
      const a = accounts.get(account);
      const knownSources = [source, ...(a?.knownSources ?? []).filter((s) => s !== source)].slice(0, KNOWN_SOURCES);
      const entry = { failures: 0, lockedUntil: a?.lockedUntil ?? 0, lastFailureAt: 0, knownSources };
      setCapped(accounts, account, entry, MAX_ENTRIES);
    },
  };
}
