/** `Servers.Instances.<key>.Limits`: hard limits in the launch's cgroup v2; the kernel enforces them. */
import * as v from 'valibot';
import { amount } from '../numbers.ts';

export const LimitsSchema = v.optional(
  v.strictObject(
    {
      /** Memory of the whole launch, in decimal MB (1 MB = 1,000,000 bytes) as every size here. */
      MemoryMB: v.optional(amount('megabytes', { positive: true, max: 1e9 })),
      /** CPU time of the whole launch, in percent of one core: 100 is one core, 250 two and a half. */
      CpuPercent: v.optional(amount('percent', { min: 1, max: 100_000 })),
      /** Processes and threads of the whole launch (a .NET server alone runs a few dozen threads). */
      Tasks: v.optional(amount('tasks', { whole: true, min: 1, max: 4_194_304 })),
    },
    'expected a map of hard limits (MemoryMB, CpuPercent, Tasks)',
  ),
);

export type Limits = NonNullable<v.InferOutput<typeof LimitsSchema>>;
