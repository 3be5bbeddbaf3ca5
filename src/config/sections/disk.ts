import * as v from 'valibot';

const megabytes = (def: number) =>
  v.optional(
    v.pipe(v.number('expected a number of megabytes'), v.gtValue(0, 'expected a positive number of megabytes')),
    def,
  );

/**
 * `Disk`: when the file systems holding the instance root and the working folder count as low on space (the lower
 * of the two thresholds, so a small disk is not low all the time and a large one not only at its last gigabyte),
 * and how often they are read. Megabytes are decimal (1,000,000 bytes), as `df -H` counts.
 */
export const DiskSchema = v.strictObject(
  {
    LowFreeMegabytes: megabytes(1000),
    LowFreePercent: v.optional(
      v.pipe(
        v.number('expected a percentage'),
        v.gtValue(0, 'expected a percentage above 0'),
        v.maxValue(100, 'expected a percentage of at most 100'),
      ),
      5,
    ),
    CheckSeconds: v.optional(
      v.pipe(
        v.number('expected a number of seconds'),
        v.gtValue(0, 'expected a positive number of seconds'),
        v.maxValue(3600, 'expected at most 3600 seconds: a disk can fill up in less than an hour'),
      ),
      30,
    ),
  },
  'expected a map with LowFreeMegabytes, LowFreePercent and CheckSeconds',
);

export type DiskSettings = v.InferOutput<typeof DiskSchema>;
