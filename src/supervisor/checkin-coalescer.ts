/**
 * Hands a server's check-ins to its statechart at most once per window. A server (or anyone holding its secret)
 * that pings in a tight loop then costs one statechart transition per window instead of one per request: a
 * transition, its snapshot and its bus fact cost more than the HTTP answer itself (bench/RESULTS.md, check-in
 * throughput). A check-in inside the window is handed on when the window ends, so the machine hears of every
 * check-in at most one window late: its hang deadline can only move later, by less than a window, never earlier.
 */
import { realClock, type TimerClock } from './timer-clock.ts';

export interface CheckinCoalescer {
  /** A check-in of launch `launchId` was accepted. */
  checkin(launchId: number): void;
  /** A new launch: its first check-in goes through at once; a check-in still held for the old one is dropped. */
  reset(): void;
}

/** The window for a check-in timeout: 1 % of it, at most 250 ms (a 90 s timeout gets 250 ms, a 2 s one 20 ms). */
export function coalesceWindowMs(checkinTimeoutMs: number): number {
  return Math.min(250, Math.floor(checkinTimeoutMs / 100));
}

export function createCheckinCoalescer(
  windowMs: () => number,
  forward: (launchId: number) => void,
  clock: TimerClock = realClock,
): CheckinCoalescer {
  let lastForwardAt = Number.NEGATIVE_INFINITY;
  let held: number | null = null;
  let timer: unknown = null;

  const send = (launchId: number) => {
    lastForwardAt = clock.now();
    forward(launchId);
  };
  const flush = () => {
    timer = null;
    if (held === null) return;
    const launchId = held;
    held = null;
    send(launchId);
  };

  return {
    checkin(launchId) {
      const now = clock.now();
      if (timer === null && now - lastForwardAt >= windowMs()) return send(launchId);
      held = launchId;
      timer ??= clock.setTimeout(flush, Math.max(0, lastForwardAt + windowMs() - now));
    },
    reset() {
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      held = null;
      lastForwardAt = Number.NEGATIVE_INFINITY;
    },
  };
}
