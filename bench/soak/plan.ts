import type { Rng } from './prng.ts';
import { FAULT_KINDS, type FaultKind } from './state.ts';

/** What the fault loop injects when, decided up front from the seed. */

/** Kinds the fault loop picks from; the daemon kills are scheduled apart (they take the whole daemon down). */
export const LOOP_KINDS = FAULT_KINDS.filter((k) => !k.startsWith('daemon-kill'));

export interface Plan {
  /** Gap between injections (ms). */
  everyMs: number;
  /** Offsets (ms from the start) of the daemon SIGKILLs, and the PersistServers of the daemon started after each. */
  daemonKills: Array<{ atMs: number; persist: boolean }>;
  /** Injections stop this long before the end, so the final SIGTERM meets a daemon at work, not mid-restart. */
  quietMs: number;
  next(): FaultKind;
}

/** `skip`: kinds this machine cannot inject (reported as skipped), left out of the plan. */
export function makePlan(rng: Rng, durationMs: number, skip: ReadonlySet<FaultKind> = new Set()): Plan {
  const kinds = LOOP_KINDS.filter((k) => !skip.has(k));
  // First every kind once, in a shuffled order, so even a one-minute run sees them all; then random picks.
  const firstPass = rng.sample(kinds, kinds.length);
  const kills = durationMs >= 5 * 60_000 ? 6 : 3;
  // The first pass must fit in the run: minus the first daemon's start, the quiet end and the daemon restarts
  // (other faults go on during one, but those that need the daemon wait).
  const available = 0.85 * durationMs - 12_000 - kills * 4000;
  const everyMs = Math.min(3000, Math.max(500, available / kinds.length));
  // The first daemon starts with PersistServers false; after each kill the next is true, true, false: a
  // no-persist daemon's leftovers meet a persist one, a persist one's are adopted, and the last phase (false)
  // ends with a SIGTERM that must take every server down.
  const daemonKills = Array.from({ length: kills }, (_, i) => ({
    atMs: Math.round(durationMs * (0.15 + (0.35 * i) / Math.max(1, kills - 1)) + rng.between(-500, 500)),
    persist: i % 3 !== 2,
  }));
  return {
    everyMs,
    daemonKills,
    quietMs: 6000,
    next: () => firstPass.shift() ?? rng.pick(kinds),
  };
}
