/** Order statistics over a sample, nearest-rank (no interpolation: every reported value was observed). */

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  min: number;
  mean: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : NaN,
    min: sorted.length ? (sorted[0] as number) : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** One histogram's summary as percentile points: [percent, value], ascending (what perf_hooks gives). */
export interface CdfSample {
  n: number;
  cdf: Array<[number, number]>;
}

/**
 * The p-th percentile of the union of several histograms, each known by its count and percentile points: the
 * smallest value x such that at most (100 − p)% of all samples lie above x. Exact up to the points' granularity.
 */
export function mergedPercentile(parts: readonly CdfSample[], p: number): number {
  const total = parts.reduce((a, h) => a + h.n, 0);
  if (total === 0) return NaN;
  const above = (x: number) =>
    parts.reduce((a, h) => {
      let pct = 0;
      for (const [q, v] of h.cdf) if (v <= x && q > pct) pct = q;
      return a + h.n * (1 - pct / 100);
    }, 0);
  const candidates = [...new Set(parts.flatMap((h) => h.cdf.map(([, v]) => v)))].sort((a, b) => a - b);
  return candidates.find((x) => above(x) <= total * (1 - p / 100)) ?? candidates.at(-1) ?? NaN;
}
