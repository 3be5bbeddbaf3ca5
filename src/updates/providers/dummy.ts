import { UpdateError } from '../../errors.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';

const WHOLE_NUMBER = /^\d+$/;

/**
 * `UpdateType: Dummy` (the real watchdog's `UpdateProviderDummy.cs`): every check finds an update that only counts
 * the revision up (docs/diy-updates.md); one not a whole number counts as 0 with a warning (the original throws).
 */
export function createDummyProvider(ctx: ProviderContext): UpdateProvider {
  let warnedFor: string | null = null;

  const next = (current: string | null): string => {
    if (current === null) return '1';
    if (WHOLE_NUMBER.test(current)) return (BigInt(current) + 1n).toString();
    if (warnedFor !== current) {
      warnedFor = current;
      ctx.log.warn('the current revision is not a whole number; the Dummy provider counts it as 0', {
        revision: current,
      });
    }
    return '1';
  };

  return {
    type: 'Dummy',
    async check(current) {
      return { available: true, revision: next(current) };
    },
    async apply(current, signal) {
      if (signal.aborted) throw new UpdateError('the Dummy update was cancelled', { cause: signal.reason });
      return next(current);
    },
  };
}
