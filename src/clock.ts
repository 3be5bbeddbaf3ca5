/**
 * The daemon's clock for durations: milliseconds on a monotonic clock (`performance.now()`), which an NTP step, a
 * VM resume or `date -s` never moves. Every deadline, timeout, rate, back-off, uptime and timer delay is measured on
 * it, so a step of the wall clock neither stretches nor shrinks one. Wall time (`Date.now()`) is for what a person
 * reads or what is stored (bus facts, status times, file ages) and for cron schedules, which follow the calendar.
 */
export const monotonicMs = (): number => performance.now();

/** A moment taken on `monotonicMs` as the wall clock reads it now (a step since moves it along): for showing it. */
export const wallTimeOf = (ms: number): number => Date.now() - (monotonicMs() - ms);
