import { setCapped } from '../capped-map.ts';
import { monotonicMs } from '../clock.ts';

/** What a login begun at the provider needs back at its callback. */
export interface PendingLogin {
  /** PKCE's code_verifier: only its S256 digest went to the provider. */
  verifier: string;
  nonce: string;
  /** The provider and client it was begun with: a change of either in the meantime refuses the callback. */
  fingerprint: string;
}

/** Logins begun and not finished, at most this many (a stranger can begin as many as they like). */
export const MAX_PENDING = 1000;
/** How long a login may take at the provider; past it, its callback is refused and the user begins again. */
export const PENDING_MS = 10 * 60_000;

/**
 * Logins begun at the provider, kept on the daemon by their `state` (a random value the browser carries there and
 * back): bounded in count (oldest dropped first) and in time (monotonic, so a clock step changes nothing).
 */
export function createPendingLogins(opts: { max?: number; ttlMs?: number; now?: () => number } = {}) {
  const max = opts.max ?? MAX_PENDING;
  const ttl = opts.ttlMs ?? PENDING_MS;
  const now = opts.now ?? monotonicMs;
  // Insertion order is age: the first entries are the oldest, so expiry stops at the first young one.
  const pending = new Map<string, PendingLogin & { at: number }>();
  const sweep = (t: number) => {
    for (const [state, p] of pending) {
      if (t - p.at < ttl) break;
      pending.delete(state);
    }
  };
  return {
    add(state: string, login: PendingLogin): void {
      const t = now();
      sweep(t);
      setCapped(pending, state, { ...login, at: t }, max);
    },
    /** The login `state` names, once: a callback replayed with the same state finds nothing. */
    take(state: string): PendingLogin | undefined {
      const t = now();
      sweep(t);
      const p = pending.get(state);
      if (!p) return undefined;
      pending.delete(state);
      return { verifier: p.verifier, nonce: p.nonce, fingerprint: p.fingerprint };
    },
    size: () => pending.size,
  };
}
