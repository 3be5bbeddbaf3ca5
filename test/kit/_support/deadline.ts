/**
 * `promise`'s outcome, or a rejection naming `what` once `ms` have passed without one: a far deadline that only
 * catches a hang (a duration is a benchmark figure, not a test). The timer never keeps the process alive.
 */
export function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled after ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
