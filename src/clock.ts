/**
 * The daemon's clock for durations: milliseconds on a monotonic clock (`performance.now()`), which an NTP step, a
 * VM resume or `date -s` never moves. Every deadline, timeout, rate, back-off, uptime and timer delay is measured on
 * it, so a step of the wall clock neither stretches nor shrinks one. Wall time (`Date.now()`) is for what a person
 * reads or what is stored (bus facts, status times, file ages) and for cron schedules, which follow the calendar.
 */
export const monotonicMs = (): number => performance.now();

/** A moment taken on `monotonicMs` as the wall clock reads it now (a step since moves it along): for showing it. */
export const wallTimeOf = (ms: number): number => Date.now() - (monotonicMs() - ms);

/** A pending `pollFirstClock` timer: the timeout, then the two turns of the event loop after it. */
interface PollFirstTimer {
  timer: NodeJS.Timeout;
  turn?: NodeJS.Immediate;
}

/**
 * The instance charts' timer clock (xstate's `clock`): a delay that comes due acts only after the event loop has
 * polled its sockets twice. After a stall (a starved or suspended host, a long pause of the process) Node runs the
 * timers that came due before it reads what waited on the sockets, so a check-in that arrived in time would be read
 * after the hang timer it beat; two turns cover a connection accepted in the first and read in the second.
 */
export const pollFirstClock = {
  setTimeout(fn: () => void, ms: number): PollFirstTimer {
    const t: PollFirstTimer = {
      timer: setTimeout(() => {
        t.turn = setImmediate(() => {
          t.turn = setImmediate(fn);
        });
      }, ms),
    };
    return t;
  },
  clearTimeout(t: PollFirstTimer): void {
    clearTimeout(t.timer);
    if (t.turn) clearImmediate(t.turn);
  },
};
