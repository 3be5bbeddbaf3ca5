/** For durations: no step of the wall clock moves it. `Date.now()` is for times people read, stored times and cron. */
export const monotonicMs = (): number => performance.now();

/** A moment taken on `monotonicMs` as the wall clock reads it now (a step since moves it along): for showing it. */
export const wallTimeOf = (ms: number): number => Date.now() - (monotonicMs() - ms);

/** The statechart's `Stamp` of now: `wall` shown and kept, `mono` for deadlines and holds. */
export const stampNow = (): { wall: number; mono: number } => ({ wall: Date.now(), mono: monotonicMs() });

interface PollFirstTimer {
  timer: NodeJS.Timeout;
  turn?: NodeJS.Immediate;
}

/**
 * The charts' xstate `clock`: a due delay acts after the loop polled its sockets twice. After a stall Node runs due
 * timers first, so a check-in in time would lose to the hang timer; two turns: one to accept, one to read.
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
