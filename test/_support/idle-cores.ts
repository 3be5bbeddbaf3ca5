import { cpus } from 'node:os';

/** The machine's idle and total CPU time so far, added up over its cores (ms), and how many cores it has. */
function times(): { idle: number; total: number; cores: number } {
  const all = cpus();
  let idle = 0;
  let total = 0;
  for (const { times: t } of all) {
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total, cores: all.length };
}

/**
 * How many cores sat idle between the last two `sample()` calls, from the kernel's counters (the whole machine's,
 * so other work on it counts too). `spend()` forgets the reading: a file just started shows in the next one only.
 */
export function idleMeter(): { sample(): void; readonly idleCores: number | undefined; spend(): void } {
  let last = times();
  let idle: number | undefined;
  return {
    sample() {
      const now = times();
      const spent = now.total - last.total;
      idle = spent > 0 ? ((now.idle - last.idle) / spent) * now.cores : undefined;
      last = now;
    },
    get idleCores() {
      return idle;
    },
    spend() {
      idle = undefined;
    },
  };
}

/** Marks the machine's counters now; the function returned tells the core-seconds it has been busy since. */
export function busySince(): () => number {
  const from = times();
  return () => {
    const now = times();
    return (now.total - now.idle - (from.total - from.idle)) / 1000;
  };
}
