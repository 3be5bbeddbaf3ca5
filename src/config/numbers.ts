import * as v from 'valibot';

/**
 * The longest wait in seconds: every one becomes a Node timer, and a timer longer than 2^31-1 ms (about 24.8 days)
 * fires after 1 ms instead, so `TimeoutSeconds: 1e10` (or `1e400`, which is Infinity) would declare a hang at once.
 */
export const MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
export const TOO_LONG = `expected at most ${MAX_SECONDS} seconds (about 24 days, the longest timer)`;

/** `tooSmall`/`tooBig`: the messages past `min`/`max` when "expected at least/at most <n> <unit>" does not say why. */
export interface Bounds {
  min?: number;
  positive?: boolean;
  max?: number;
  tooSmall?: string;
  tooBig?: string;
  whole?: boolean;
}

/** A number of `unit` within bounds, each message naming the unit: every count, size and wait of the configuration. */
export function amount(unit: string, b: Bounds) {
  const kind = `expected a ${b.whole ? 'whole ' : ''}number of ${unit}`;
  const at = (n: number) => `${n} ${n === 1 ? unit.replace(/s$/, '') : unit}`;
  const lowest = b.positive
    ? v.gtValue<number, number, string>(0, `expected a positive ${kind.slice('expected a '.length)}`)
    : v.minValue<number, number, string>(
        b.min ?? Number.NEGATIVE_INFINITY,
        b.tooSmall ?? (b.min === 0 ? `expected zero or more ${unit}` : `expected at least ${at(b.min ?? 0)}`),
      );
  return v.pipe(
    v.number(kind),
    v.check((n) => !b.whole || Number.isInteger(n), kind),
    lowest,
    v.maxValue(b.max ?? Number.POSITIVE_INFINITY, b.tooBig ?? `expected at most ${at(b.max ?? 0)}`),
  );
}

/** A wait in seconds above 0 (or from 0: `{ min: 0 }`), fractions allowed (tests shrink every wait); `def` when absent. */
export const seconds = (def: number, b: Bounds = { positive: true }) =>
  v.optional(amount('seconds', { max: MAX_SECONDS, tooBig: TOO_LONG, ...b }), def);

/** A TCP port as the config takes it, one message for every way it can be wrong. */
const PORT = 'expected an integer 1-65535';
export const Port = v.pipe(v.number(PORT), v.integer(PORT), v.minValue(1, PORT), v.maxValue(65535, PORT));

/** Text of at least one character, `what` naming it in the message (`expected a file path`). */
export const text = (what: string) => v.pipe(v.string(`expected ${what}`), v.nonEmpty(`expected ${what}`));

/** A string `problem` finds nothing wrong with; refused in its words. */
export const checkedText = (expected: string, problem: (s: string) => string | null) =>
  v.pipe(
    v.string(expected),
    v.check(
      (s) => problem(s) === null,
      (issue) => problem(String(issue.input)) ?? expected,
    ),
  );

/** An http or https URL; every way it can be wrong says `expected`. */
export const httpUrl = (expected: string) =>
  v.pipe(v.string(expected), v.url(expected), v.regex(/^https?:\/\//i, expected));
