import * as v from 'valibot';
import { amount, seconds } from '../numbers.ts';

/**
 * `Disk`: when the file systems holding the instance root and the working folder count as low on space (the lower
 * of the two thresholds, so a small disk is not low all the time and a large one not only at its last gigabyte),
 * and how often they are read. Megabytes are decimal (1,000,000 bytes), as `df -H` counts.
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
