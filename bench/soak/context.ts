import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Rng } from './prng.ts';
import type { SoakState, Track } from './state.ts';

/** What every fault injector is handed: the state, the PRNG, deferred steps and the servers' mode files. */
export interface SoakContext {
  s: SoakState;
  rng: Rng;
  /** Runs `fn` after `ms` (the run loop's timers; all cleared at the end, so nothing outlives the run). */
  later(ms: number, fn: () => void | Promise<void>): void;
  /** Instances a fault is still playing out on (a mode set, a frozen server), not to be picked again yet. */
  busy: Set<string>;
  /** Instances an environment fault's recovery check waits on, with the check's time: the operator leaves them be. */
  recovering: Map<string, number>;
}

export type ServerMode =
  | 'normal'
  | 'exit-at-start'
  | 'crash-loop'
  | 'ignore-shutdown'
  | 'slow-start'
  | 'fork'
  | 'old-secret';

/** Modes a server takes for one launch only (it sets its mode file back to normal): environment faults. */
export type OneShotMode = 'chatty' | 'escaping-helper' | 'endless-status';

/** The soak server reads `<dir>/modes/<key>` at each launch (bench/soak/server.mjs). */
export function setMode(s: SoakState, key: string, mode: ServerMode | OneShotMode): void {
  writeFileSync(join(s.dir, 'modes', key), mode);
}

/** A configured, running instance with a server, not busy with another fault; null when there is none. */
export function pickRunning(ctx: SoakContext, filter: (t: Track) => boolean = () => true): Track | null {
  const candidates = [...ctx.s.tracks.values()].filter(
    (t) =>
      t.configured &&
      !ctx.busy.has(t.key) &&
      t.status?.state === 'server.running' &&
      t.status.pid !== null &&
      filter(t),
  );
  return candidates.length === 0 ? null : ctx.rng.pick(candidates);
}
