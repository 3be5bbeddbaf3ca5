/** The maintenance runner's one wake-up timer and its player-count poll, on a clock a test can replace. */
import type { Clock } from './maintenance-types.ts';

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** Node's longest timer; a later time is reached by waking up early and arming again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One timer at a time, at the earliest of the times it is given. */
export class Waker {
  private timer: unknown = null;

  constructor(
    private readonly clock: Clock,
    private readonly wake: () => void,
  ) {}

  arm(times: number[]): void {
    this.disarm();
    if (times.length === 0) return;
    const ms = Math.min(Math.max(0, Math.min(...times) - this.clock.now()), MAX_TIMER_MS);
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.wake();
    }, ms);
  }

  disarm(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}

/** One player-count read at a time; an answer (a count) is handed on, a failed read is dropped (the next poll asks). */
export class PlayerPoll {
  private inFlight = false;

  constructor(
    private readonly read: () => Promise<number | null>,
    private readonly answered: (players: number) => void,
  ) {}

  start(): void {
    if (this.inFlight) return;
    this.inFlight = true;
    this.read().then(
      (n) => {
        this.inFlight = false;
        // A server that gives no count is asked again at the next poll, not at once.
        if (n !== null) this.answered(n);
      },
      () => {
        this.inFlight = false;
      },
    );
  }
}
