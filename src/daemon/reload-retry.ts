import type { TimingSettings } from '../config/schema.ts';

/** What the daemon lacks, not what the files say: the same reload can succeed once it has them back. */
const STARVED = /\((EMFILE|ENFILE|EAGAIN|ENOMEM)\)/;

/** The reload was refused only because the files could not be read for want of descriptors or memory. */
export function starvedOnly(problems: readonly string[]): boolean {
  return problems.length > 0 && problems.every((p) => STARVED.test(p));
}

/**
 * When to try such a reload again (its `attempt`th retry, from 0): the back-off of a blocked launch, from
 * `Timing.BackoffInitialSeconds` doubling to `Timing.BackoffMaxSeconds`. A reload a person asked for is not dropped
 * for a want of descriptors that the connection cap or a flood will soon give back.
 */
export function reloadRetryMs(timing: TimingSettings, attempt: number): number {
  return Math.min(timing.BackoffInitialSeconds * 2 ** attempt, timing.BackoffMaxSeconds) * 1000;
}
