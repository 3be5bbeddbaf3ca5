/** Bounded waiting: every loop in the bench has a count or a deadline, usually both. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it returns a truthy value; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs: number,
  everyMs = 10,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await sleep(everyMs);
  }
}

/** High-resolution wall time in ms, the same clock the bench servers stamp with (timeOrigin + now). */
export const wallNow = (): number => performance.timeOrigin + performance.now();
