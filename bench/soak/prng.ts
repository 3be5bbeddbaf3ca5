/**
 * The soak's only source of randomness: a seeded PRNG (mulberry32), so a seed printed by a failed run replays the
 * same choices. Timing on a shared machine still varies, so a replay is the same plan, not the same interleaving.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [lo, hi] (both included). */
  int(lo: number, hi: number): number;
  /** Uniform in [lo, hi). */
  between(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
  /** `n` distinct items of `items` (fewer if there are not that many). */
  sample<T>(items: readonly T[], n: number): T[];
}

export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    between: (lo, hi) => lo + next() * (hi - lo),
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
    chance: (p) => next() < p,
    sample: (items, n) => {
      const pool = [...items];
      const out = [];
      while (out.length < n && pool.length > 0) out.push(...pool.splice(Math.floor(next() * pool.length), 1));
      return out;
    },
  };
  return rng;
}
