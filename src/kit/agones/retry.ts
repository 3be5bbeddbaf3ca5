import { setTimeout as delay } from 'node:timers/promises';
import { monotonicMs } from '../../clock.ts';

/**
 * How the client waits for an SDK server not answering yet: a sidecar may start after the game server. Waits double
 * from `initialDelayMs` to `maxDelayMs`; `maxElapsedMs` since the first attempt (`Infinity`: only a cancel ends it);
 * `timeoutMs` per attempt.
 */
export interface RetryPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  maxElapsedMs: number;
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 2_000,
  maxElapsedMs: 60_000,
  timeoutMs: 5_000,
};

/** One attempt (for health pings: the next ping is the retry). */
export const NO_RETRY: Partial<RetryPolicy> = { maxElapsedMs: 0 };

/** The wait before attempt `n + 1` (n ≥ 1 failed attempts so far). */
export function backoffDelay(policy: RetryPolicy, failures: number): number {
  const exp = policy.initialDelayMs * 2 ** Math.max(0, failures - 1);
  return Math.min(policy.maxDelayMs, exp);
}

export type Attempt<T> = { ok: true; value: T } | { ok: false; retry: boolean; error: Error };

/** Runs `attempt` until it succeeds, fails for good or time is up (the last failure thrown), or `signal` aborts. */
export async function retrying<T>(
  attempt: (signal: AbortSignal) => Promise<Attempt<T>>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<T> {
  const started = monotonicMs();
  for (let failures = 1; ; failures++) {
    signal?.throwIfAborted();
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const result = await attempt(signal ? AbortSignal.any([signal, timeout]) : timeout);
    if (result.ok) return result.value;
    signal?.throwIfAborted();
    const wait = backoffDelay(policy, failures);
    if (!result.retry || monotonicMs() - started + wait > policy.maxElapsedMs) throw result.error;
    // A cancel during the wait ends the loop with the signal's reason, not the timer's AbortError.
    await delay(wait, undefined, { signal }).catch(() => signal?.throwIfAborted());
  }
}
