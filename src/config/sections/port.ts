import * as v from 'valibot';

/** A TCP port as the config takes it, one message for every way it can be wrong. */
export const Port = v.pipe(
  v.number('expected an integer 1-65535'),
  v.integer('expected an integer 1-65535'),
  v.minValue(1, 'expected an integer 1-65535'),
  v.maxValue(65535, 'expected an integer 1-65535'),
);
