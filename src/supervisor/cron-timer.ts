/**
 * The one cron timer loop: croner's calendar on a `TimerClock` a test can simulate (croner's own timers read the real
 * time); a Node timer waits on the monotonic clock, so it wakes every `WALL_CHECK_MS` to see if the wall stepped.
 */
import { nextFire } from '../config/cron.ts';

/** The real timers, or a test's simulated clock (xstate's SimulatedClock fits). */
export interface TimerClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: TimerClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A fire the wall clock stepped past runs at most this late. */
export const WALL_CHECK_MS = 10_000;

/** The next fire is computed after each: missed fires (a stall, a step forward) make one run, not a burst. */
export function cronTimer(opts: {
  /** 5 fields, or 6 with seconds first. */
  schedule: string;
  timeZone: string | undefined;
  /** Fire this long before each time (an announcement before a restart). */
  leadMs?: number;
  fire: () => void;
  /** The next fire cannot be computed (a time zone gone from the system): the timer stops. */
  broken: (err: unknown) => void;
  clock?: TimerClock;
}) {
  const clock = opts.clock ?? realClock;
  const lead = opts.leadMs ?? 0;
  let at: number | null = null;
  let handle: unknown = null;
  let stopped = false;
  const wait = () => {
    if (at !== null) handle = clock.setTimeout(wake, Math.min(Math.max(0, at - clock.now()), WALL_CHECK_MS));
  };
  const arm = () => {
    try {
      // The first scheduled time far enough ahead that its lead is still to come.
      const fire = nextFire(opts.schedule, opts.timeZone, clock.now() + lead);
      at = fire === null ? null : fire - lead;
    } catch (err) {
      at = null;
      opts.broken(err);
    }
    wait();
  };
  const wake = () => {
    handle = null;
    if (at !== null && clock.now() < at) return wait();
    opts.fire();
    if (!stopped) arm();
  };
  arm();
  return {
    get next(): number | null {
      return at;
    },
    stop(): void {
      stopped = true;
      if (handle !== null) clock.clearTimeout(handle);
      handle = null;
    },
  };
}

export type CronTimer = ReturnType<typeof cronTimer>;
