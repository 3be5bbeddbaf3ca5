import * as v from 'valibot';

/** An optional whole number of `unit` within [min, max], `def` when absent; messages name the unit. */
export const wholeNumber = (unit: string, min: number, max: number, def: number) =>
  v.optional(
    v.pipe(
      v.number(`expected a whole number of ${unit}`),
      v.integer(`expected a whole number of ${unit}`),
      v.minValue(min, `expected at least ${min} ${min === 1 ? unit.replace(/s$/, '') : unit}`),
      v.maxValue(max, `expected at most ${max} ${unit}`),
    ),
    def,
  );
