/**
 * The daemon's clock for durations (deadlines, timeouts, rates, back-offs, uptimes, timer delays): monotonic
 * milliseconds, which no step of the wall clock moves. `Date.now()` is for times people read or that are stored, and
 * for cron.
 */
export const monotonicMs = (): number => performance.now();

/** A moment taken on `monotonicMs` as the wall clock reads it now (a step since moves it along): for showing it. */
export const wallTimeOf = (ms: number): number => Date.now() - (monotonicMs() - ms);
