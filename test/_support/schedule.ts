/**
 * Which test file the runner starts next. Most files spend their time waiting on timers and child processes, so
 * a fixed number at once either leaves cores idle (two waiting files) or starves deadlines (three busy ones). The
 * runner instead knows each file's cost from its last run, its wall time and the CPU time of its process tree,
 * and starts files while the cores they keep busy on average fit the machine's.
 */

/** One file's last run: how long it took and the CPU seconds its processes used. */
export interface FileCost {
  seconds: number;
  cpu: number;
}

/** The cores a file keeps busy on average; a file never measured counts as one whole core. */
export function loadOf(cost: FileCost | undefined): number {
  if (!cost || !(cost.seconds > 0) || !(cost.cpu >= 0)) return 1;
  return Math.min(1.5, Math.max(0.05, cost.cpu / cost.seconds));
}

/**
 * How far past the cores the running files' loads may add up while the cores are seen idle: a load is an average,
 * and a file spends it in bursts between waits, so loads that add up to the cores still left them idle for 12 % of
 * a run's core-seconds.
 */
export const OVERCOMMIT = 1.5;

/**
 * Whether the next file in the queue (the longest first) may start now: always with nothing running, else while
 * fewer than `maxJobs` run and its load fits beside the `running` loads within `cores`; past that, up to
 * OVERCOMMIT times the cores, only while `idleCores` (measured just now; undefined when not) has room for it. A
 * busy machine shows no idle cores and gets no more than the loads say. Strictly in order: a long file is never
 * held back by short ones slipping past it, which would only move it to the end of the run.
 */
export function mayStart(
  next: number,
  running: readonly number[],
  opts: { cores: number; maxJobs: number; idleCores?: number },
): boolean {
  if (running.length === 0) return true;
  if (running.length >= opts.maxJobs) return false;
  const total = running.reduce((a, b) => a + b, 0) + next;
  if (total <= opts.cores + 1e-9) return true;
  // A file's own process runs on one core at a time; a load above 1 is its children's, which come and go.
  const room = opts.idleCores !== undefined && Math.min(next, 1) <= opts.idleCores;
  return room && total <= opts.cores * OVERCOMMIT + 1e-9;
}

/** A file measured under both of these last time is short: it runs in a batch with others (batch.ts). */
export const SHORT: FileCost = { seconds: 10, cpu: 3 };
/** A batch's files took about this long together last time, so a batch is no longer than a mid-sized file. */
export const BATCH_SECONDS = 20;

/** What the runner starts: one file, or a batch of short ones run one after another in one process. */
export interface Unit {
  files: string[];
  /** The files' costs added up; undefined when one was never measured. */
  cost: FileCost | undefined;
}

/**
 * The files as units to start, in the order given (the caller sorts): each file alone, but short ones that
 * `mayBatch` allows are grouped in order until their last seconds add up to BATCH_SECONDS.
 */
export function units(
  files: readonly string[],
  costOf: (file: string) => FileCost | undefined,
  mayBatch: (file: string) => boolean,
): Unit[] {
  const out: Unit[] = [];
  let batch: Unit | undefined;
  for (const file of files) {
    const cost = costOf(file);
    const short = cost !== undefined && cost.seconds < SHORT.seconds && cost.cpu < SHORT.cpu && mayBatch(file);
    if (!short) {
      out.push({ files: [file], cost });
      continue;
    }
    if (!batch || batch.cost!.seconds + cost.seconds > BATCH_SECONDS) {
      batch = { files: [], cost: { seconds: 0, cpu: 0 } };
      out.push(batch);
    }
    batch.files.push(file);
    batch.cost = { seconds: batch.cost!.seconds + cost.seconds, cpu: batch.cost!.cpu + cost.cpu };
  }
  return out;
}
