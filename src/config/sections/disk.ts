import * as v from 'valibot';
import { amount, seconds } from '../numbers.ts';

/**
 * `Disk`: when the instance root's and working folder's file systems are low (the lower threshold, so a small disk
 * is not low all the time nor a large one only at its last GB). Megabytes are decimal, as `df -H` counts.
 */
export const DiskSchema = v.strictObject(
  {
    LowFreeMegabytes: v.optional(amount('megabytes', { positive: true }), 1000),
    LowFreePercent: v.optional(
      v.pipe(
        v.number('expected a percentage'),
        v.gtValue(0, 'expected a percentage above 0'),
        v.maxValue(100, 'expected a percentage of at most 100'),
      ),
      5,
    ),
    CheckSeconds: seconds(30, {
      positive: true,
      max: 3600,
      tooBig: 'expected at most 3600 seconds: a disk can fill up in less than an hour',
    }),
  },
  'expected a map with LowFreeMegabytes, LowFreePercent and CheckSeconds',
);

export type DiskSettings = v.InferOutput<typeof DiskSchema>;
