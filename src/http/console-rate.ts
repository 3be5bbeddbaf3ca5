/**
 * `Console.CommandsPerMinute` per caller: each caller (instance, user and address) may send that many commands in
 * any 60 s. Callers are kept only while they have commands inside the window, and the table is bounded, so a flood
 * of made-up callers cannot grow it (they are behind credentials anyway).
 */
const WINDOW_MS = 60_000;
const MAX_CALLERS = 1000;

export interface ConsoleRate {
  /** Takes one command for `caller` when under `perMinute`; false (and nothing taken) when over it. */
  admit(caller: string, perMinute: number, now?: number): boolean;
}

export function createConsoleRate(): ConsoleRate {
  const sent = new Map<string, number[]>();
  const prune = (now: number) => {
    for (const [caller, times] of sent) {
      const kept = times.filter((t) => now - t < WINDOW_MS);
      if (kept.length === 0) sent.delete(caller);
      else sent.set(caller, kept);
    }
  };
  return {
    admit(caller, perMinute, now = Date.now()) {
      const times = (sent.get(caller) ?? []).filter((t) => now - t < WINDOW_MS);
      if (times.length >= perMinute) return false;
      times.push(now);
      sent.set(caller, times);
      if (sent.size > MAX_CALLERS) prune(now);
      // Still full: the oldest caller goes, never the one being answered.
      if (sent.size > MAX_CALLERS) sent.delete(sent.keys().next().value ?? caller);
      return true;
    },
  };
}
