import type { Bus } from '../bus.ts';
import type { UpdateCheckStatus } from './status.ts';

/**
 * The outcome of an instance's update checks, so a failing check is seen rather than read as "no update": the last
 * check for the status JSON, the table and the card; every check on the bus (`instance:update-check`, for
 * `/metrics`); and one chat notice when checks have failed for `alertAfterMs`, one more when they work again.
 */
export function createCheckRecord(opts: { key: string; bus: Bus; alertAfterMs: () => number }) {
  const { key, bus } = opts;
  let last: { at: number; result: UpdateCheckStatus['result']; error: string | null } | null = null;
  let failingSince: number | null = null;
  let lastSuccessAt: number | null = null;
  /** The failing notice went out for the current run of failures. */
  let told = false;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

  return {
    succeeded(available: boolean, at: number): void {
      last = { at, result: available ? 'available' : 'none', error: null };
      bus.emit('instance:update-check', { key, ok: true, available, error: null, at });
      if (told && failingSince !== null)
        bus.emit('instance:notice', {
          key,
          kind: 'update-check',
          title: 'Update checks work again',
          message: `Update checks of \`${key}\` work again (they had failed since ${iso(failingSince)}).`,
          at,
        });
      failingSince = null;
      lastSuccessAt = at;
      told = false;
    },

    failed(error: string, at: number): void {
      last = { at, result: 'failed', error };
      failingSince ??= at;
      bus.emit('instance:update-check', { key, ok: false, available: false, error, at });
      if (told || at - failingSince < opts.alertAfterMs()) return;
      told = true;
      const since =
        lastSuccessAt === null ? 'no check has worked since the daemon started' : `last success ${iso(lastSuccessAt)}`;
      bus.emit('instance:notice', {
        key,
        kind: 'update-check',
        title: 'Update checks failing',
        message: `Update checks of \`${key}\` have failed since ${iso(failingSince)} (${since}): ${error}. The server runs on without updates until they work.`,
        reason: error,
        at,
      });
    },

    status(): UpdateCheckStatus | null {
      if (last === null) return null;
      return {
        at: new Date(last.at).toISOString(),
        result: last.result,
        error: last.error,
        failingSince: iso(failingSince),
        lastSuccessAt: iso(lastSuccessAt),
      };
    },
  };
}

export type CheckRecord = ReturnType<typeof createCheckRecord>;
