import { DAEMON_SETTLE_MS } from './bounds.ts';
import { RECOVERY_GRACE_MS } from './config.ts';
import type { SoakContext } from './context.ts';
import { isLive } from './procscan.ts';
import { check, type FaultKind, since } from './state.ts';

/**
 * No instance stays down because of a fault that has ended: RECOVERY_GRACE_MS after an environment fault ends,
 * every instance it struck runs again, with no person (the soak's operator, heal(), leaves them be meanwhile).
 * Left out: an instance removed by a reload, stopped by request, or struck by another fault or request since. A
 * daemon start in between does not excuse one: a port still held or a give-up must not need a person either.
 */

const RUNNING = /^(running|awaiting-checkin)/;
/** While a daemon restarts (a planned kill) and settles, the check waits, at most this many seconds. */
const WAIT_FOR_DAEMON_TRIES = 40;

/** The instances `keys`, struck by `kind` from now until `endsAt`, must run again by `endsAt` + the grace. */
export function watchRecovery(ctx: SoakContext, kind: FaultKind, keys: readonly string[], endsAt: number): void {
  const from = Date.now();
  const checkAt = Math.max(endsAt, from) + RECOVERY_GRACE_MS;
  for (const key of keys) ctx.recovering.set(key, Math.max(ctx.recovering.get(key) ?? 0, checkAt));
  const run = (tries: number) => {
    const ready = ctx.s.daemonReadyAt;
    if ((ready === null || Date.now() - ready < DAEMON_SETTLE_MS) && tries < WAIT_FOR_DAEMON_TRIES) {
      ctx.later(1000, () => run(tries + 1));
      return;
    }
    verify(ctx, kind, keys, from, endsAt);
    for (const key of keys) if ((ctx.recovering.get(key) ?? 0) <= checkAt) ctx.recovering.delete(key);
  };
  ctx.later(checkAt - Date.now(), () => run(0));
}

function verify(ctx: SoakContext, kind: FaultKind, keys: readonly string[], from: number, endsAt: number): void {
  const { s } = ctx;
  for (const key of keys) {
    const t = s.tracks.get(key);
    if (!t?.configured || t.touchedAt > from || t.stopRequestedAt > from || t.configuredAt > from) continue;
    const state = t.status?.state ?? 'unknown';
    const pid = t.status?.pid ?? null;
    check(
      s,
      'recovered-after-fault',
      RUNNING.test(state) && pid !== null && isLive(pid),
      () =>
        `${key}: ${state} at ${since(s)}, ${Math.round((Date.now() - endsAt) / 1000)} s after the ${kind} that struck it at ${since(s, from)} ended`,
    );
  }
}
