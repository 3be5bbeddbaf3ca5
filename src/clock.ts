/**
 * The daemon's clock for durations (deadlines, timeouts, rates, back-offs, uptimes, timer delays): monotonic
 * milliseconds, which no step of the wall clock moves. `Date.now()` is for times people read or that are stored, and
 * for cron.
 */
export const monotonicMs = (): number => performance.now();

/** A moment taken on `monotonicMs` as the wall clock reads it now (a step since moves it along): for showing it. */
export const wallTimeOf = (ms: number): number => Date.now() - (monotonicMs() - ms);

/**
 * Now on both clocks, as the supervisor stamps a maintenance event (the statechart's `Stamp`): `wall` for what is
 * shown and kept, `mono` for the deadlines and holds measured from it.
 */
export const stampNow = (): { wall: number; mono: number } => ({ wall: Date.now(), mono: monotonicMs() });

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
