import { setTimeout as delay } from 'node:timers/promises';
import { monotonicMs } from '../../clock.ts';

/**
 * How the Agones SDK client waits for an SDK server that is not answering yet. The SDK server is a sidecar in the
 * same pod and may start after the game server, so "connection refused" at first is normal, not an error.
 */
export interface RetryPolicy {
  /** The wait after the first failed attempt; each later wait doubles, up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Gives up once this long has passed since the first attempt (`Infinity`: only a cancel ends it). */
  maxElapsedMs: number;
  /** How long one attempt may take before it counts as unanswered. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 2_000,
  maxElapsedMs: 60_000,
  timeoutMs: 5_000,
};

/** A policy that makes exactly one attempt (for health pings: the next ping is the retry). */
export const NO_RETRY: Partial<RetryPolicy> = { maxElapsedMs: 0 };

/** The wait before attempt `n + 1` (n ≥ 1 failed attempts so far). */
export function backoffDelay(policy: RetryPolicy, failures: number): number {
  const exp = policy.initialDelayMs * 2 ** Math.max(0, failures - 1);
  return Math.min(policy.maxDelayMs, exp);
}

/** What one attempt ended in: a value, or a failure the loop may retry (`retry: true`) or must pass on. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; retry: boolean; error: Error };

/**
 * Runs `attempt` until it succeeds, fails for good, or the policy's time is up (then the last failure is thrown).
 * A cancel (`signal`) stops the loop at once with the signal's reason.
 */
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
