/**
 * How every fuzz suite runs a fast-check property inside `npm test`: a fixed seed per property (so a failure is the
 * same failure on every machine, and fast-check's report names the seed and the shrunk counterexample), a bounded
 * number of runs, a bound on each run's time (a hang fails the run instead of stalling the suite) and a bound on the
 * whole property's time (on a loaded machine it stops early rather than push the folder past its budget).
 *
 * `FUZZ_RUNS=<factor>` multiplies every run count and `FUZZ_SEED=<n>` replaces every seed, for a longer hunt by hand
 * (`FUZZ_REPORT=1` prints each property's runs and time):
 * `FUZZ_RUNS=20 FUZZ_SEED=$RANDOM node --import tsx node_modules/uvu/bin.js test/fuzz '\.test\.ts$'`.
 */
import fc from 'fast-check';

/**
 * Any Unicode scalar value (every code point but the surrogates) as one string unit: what fast-check's
 * `unit: 'binary'` draws from, without its cost. fast-check maps all 1.1 million of them the first time a process
 * makes a 'binary' string or a `webPath` (which percent-encodes them): 1.5 s of CPU, in each fuzz file's process.
 */
const anyScalar = fc
  .integer({ min: 0, max: 0x10ffff - 0x800 })
  .map((n) => String.fromCodePoint(n < 0xd800 ? n : n + 0x800));

/** `fc.string({ unit: 'binary', … })`, cheaply (see anyScalar). */
export const binaryString = (size: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: anyScalar, ...size });

/** What a path segment may hold as it is (RFC 3986 `pchar` but the percent-encoded ones). */
const SEGMENT_CHARS = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@"];

/** `c` percent-encoded, as fast-check's web arbitraries do: `%61` for an `a` too. */
const percentEncoded = (c: string): string => {
  const encoded = encodeURIComponent(c);
  return encoded !== c ? encoded : `%${c.charCodeAt(0).toString(16)}`;
};

/** `fc.webSegment()`, cheaply: those characters, and now and then any scalar value percent-encoded. */
export const webSegment = () =>
  fc.string({
    unit: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...SEGMENT_CHARS) },
      { weight: 1, arbitrary: anyScalar.map(percentEncoded) },
    ),
    maxLength: 10,
  });

/** `fc.webPath()`, cheaply: up to five segments, each after a `/` (the empty path too). */
export const webPath = () =>
  fc.array(webSegment(), { maxLength: 5 }).map((parts) => parts.map((p) => `/${p}`).join(''));

export interface FuzzOptions {
  /** The property's own seed: fixed, so `npm test` checks the same inputs every time. */
  seed: number;
  numRuns: number;
  /** One run (one generated input) longer than this fails as a hang; default 5 s. */
  runTimeoutMs?: number;
  /** The whole property stops generating after this long (the runs done so far count); default 10 s. */
  budgetMs?: number;
  /**
   * A count the runs must reach for the property to have meant something (so many archives extracted whole, not all
   * refused). When the budget stops the property before `floor()` holds (a loaded machine), it goes on without the
   * budget, 10 runs at a time from the next seeds, until it does or `numRuns` more runs were made: the floor is then
   * a fact reached, not a race against the clock.
   */
  floor?: () => boolean;
}

export interface FuzzStats {
  runs: number;
  ms: number;
  seed: number;
  /** The time budget ran out before numRuns. */
  interrupted: boolean;
}

function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${raw}: expected a number of 0 or more`);
  return n;
}

/**
 * Checks `property` and throws fast-check's report (seed, path, shrunk counterexample, the error it raised) when
 * some input falsifies it. `name` labels the report and the stats.
 */
export async function fuzz<Ts>(name: string, property: fc.IRawProperty<Ts>, opts: FuzzOptions): Promise<FuzzStats> {
  const seed = envNumber('FUZZ_SEED') ?? opts.seed;
  const numRuns = Math.max(1, Math.round(opts.numRuns * (envNumber('FUZZ_RUNS') ?? 1)));
  const started = performance.now();
  const timeout = opts.runTimeoutMs ?? 5_000;
  const fail = (details: fc.RunDetails<Ts>) =>
    new Error(`fuzz ${name} failed:\n${fc.defaultReportMessage(details) ?? 'no report'}`);
  const details = await fc.check(property, {
    seed,
    numRuns,
    timeout,
    interruptAfterTimeLimit: opts.budgetMs ?? 10_000,
    markInterruptAsFailure: false,
    includeErrorInReport: true,
  });
  if (details.failed) throw fail(details);
  let runs = details.numRuns;
  // Bounded: a pass that makes no run ends the loop, and the extra runs stay within numRuns.
  const most = runs + numRuns;
  for (let next = seed + 1; details.interrupted && opts.floor && !opts.floor() && runs < most; next++) {
    const more = await fc.check(property, {
      seed: next,
      numRuns: Math.min(10, most - runs),
      timeout,
      includeErrorInReport: true,
    });
    if (more.failed) throw fail(more);
    if (more.numRuns === 0) break;
    runs += more.numRuns;
  }
  const stats: FuzzStats = {
    runs,
    ms: Math.round(performance.now() - started),
    seed,
    interrupted: details.interrupted,
  };
  if (process.env.FUZZ_REPORT)
    console.log(`fuzz ${name}: ${stats.runs}/${numRuns} runs in ${stats.ms} ms, seed ${seed}`);
  return stats;
}
