import { monotonicMs } from '../clock.ts';

/** `Users.LoginAttemptsPerMinute`, `Users.LoginFailuresBeforeLockout`, `Users.LoginLockoutSeconds`, `…MaxSeconds`. */
export interface LoginLimitSettings {
  /** Per source: a bucket of this many attempts, refilled at this many a minute. */
  perMinute: number;
  /** Per account: wrong passwords in a row that are free; the next one locks the account. */
  freeFailures: number;
  /** The first lockout; each further failure after one doubles it… */
  lockoutMs: number;
  /** …up to this, so a stranger can never lock a real user out for longer. */
  maxLockoutMs: number;
}

/** Why a login is not even tried: its source used up its attempts, or its account is locked for now. */
export type LoginBlock = { reason: 'limited' | 'locked'; retryAfterMs: number };

export interface LoginLimits {
  /** Takes one attempt from the source's bucket and checks the account; null when the password may be checked. */
  admit(source: string, account: string): LoginBlock | null;
  /** A wrong password (or unknown user) for `account`. */
  failed(account: string): void;
  /** A good one: the account's failures are forgotten, and `source` may log in to it through a later lockout. */
  succeeded(source: string, account: string): void;
}

/** The schema's defaults: 10 attempts a minute, 5 free failures, 10 s doubling to 5 min. */
export const DEFAULT_LOGIN_LIMITS: LoginLimitSettings = {
  perMinute: 10,
  freeFailures: 5,
  lockoutMs: 10_000,
  maxLockoutMs: 300_000,
};

interface Bucket {
  tokens: number;
  at: number;
}
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

function remember<V>(map: Map<string, V>, key: string, value: V): V {
  map.delete(key);
  if (map.size >= MAX_ENTRIES) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
  map.set(key, value);
  return value;
}

/**
 * Login attempts limited two ways. Per source (an address, an IPv6 /64): a token bucket, so one client cannot try
 * passwords quickly. Per account: after `freeFailures` wrong ones in a row, a lockout of `lockoutMs` that doubles
 * with each further failure up to `maxLockoutMs`; attempts during it are refused unchecked and do not extend it.
 * A source that logged in to the account before is not held by its lockout, so a stranger failing on purpose
 * delays only new places, and never for longer than the cap. `now` is a monotonic clock in ms.
 */
export function createLoginLimits(settings: () => LoginLimitSettings, now: () => number = monotonicMs): LoginLimits {
  const buckets = new Map<string, Bucket>();
  const accounts = new Map<string, Account>();
  return {
    admit(source, account) {
      const set = settings();
      const t = now();
      const capacity = Math.max(1, set.perMinute);
      const b = buckets.get(source) ?? { tokens: capacity, at: t };
      b.tokens = Math.min(capacity, b.tokens + ((t - b.at) * capacity) / 60_000);
      b.at = t;
      remember(buckets, source, b);
      if (b.tokens < 1) return { reason: 'limited', retryAfterMs: Math.ceil(((1 - b.tokens) * 60_000) / capacity) };
      b.tokens -= 1;
      const a = accounts.get(account);
      if (a && a.lockedUntil > t && !a.knownSources.includes(source))
        return { reason: 'locked', retryAfterMs: a.lockedUntil - t };
      return null;
    },
    failed(account) {
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
      remember(accounts, account, a);
    },
    succeeded(source, account) {
      const a = accounts.get(account);
      const known = (a?.knownSources ?? []).filter((s) => s !== source);
      remember(accounts, account, {
        failures: 0,
        lockedUntil: a?.lockedUntil ?? 0,
        lastFailureAt: 0,
        knownSources: [source, ...known].slice(0, KNOWN_SOURCES),
      });
    },
  };
}
