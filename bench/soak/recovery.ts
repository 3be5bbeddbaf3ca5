import { DAEMON_SETTLE_MS } from './bounds.ts';
import { RECOVERY_GRACE_MS, RECOVERY_PATIENCE_MS } from './config.ts';
import type { SoakContext } from './context.ts';
import { isLive } from './procscan.ts';
import { check, type FaultKind, since, type Track } from './state.ts';

/**
 * No instance stays down because of a fault that has ended: from RECOVERY_GRACE_MS after an environment fault ends,
 * every instance it struck must be seen running again, at the latest RECOVERY_PATIENCE_MS later (an instance still
 * starting on a loaded machine is on its way; one left stopped.failing is not), with no person: the soak's operator,
 * heal(), leaves them be meanwhile. Left out: an instance removed by a reload, stopped by request (before or since),
 * or struck by another fault or request since. A daemon start in between excuses nothing: a port still held or a
 * give-up must not need a person either; the check waits while a daemon restarts and settles, and gives the
 * instances it relaunches the same patience from then.
 */

const RUNNING = /^server\.(running|awaiting-checkin)/;

// A stop still under way when the fault struck (the last thing asked of it) leaves it rightly down.
const excused = (t: Track | undefined, from: number) =>
  !t?.configured ||
  t.touchedAt > from ||
  t.configuredAt > from ||
  (t.stopRequestedAt > 0 && t.stopRequestedAt >= t.touchedAt);

const running = (t: Track) => {
  const pid = t.status?.pid ?? null;
  return RUNNING.test(t.status?.state ?? '') && pid !== null && isLive(pid);
};

/**
 * The instances `keys`, struck by `kind` from `from` (now, unless the fault began earlier) until `endsAt`, must run
 * again (see above).
 */
export function watchRecovery(
  ctx: SoakContext,
  kind: FaultKind,
  keys: readonly string[],
  endsAt: number,
  from = Date.now(),
): void {
  const { s } = ctx;
  const firstAt = Math.max(endsAt, from) + RECOVERY_GRACE_MS;
  const lastAt = firstAt + RECOVERY_PATIENCE_MS;
  for (const key of keys) ctx.recovering.set(key, Math.max(ctx.recovering.get(key) ?? 0, lastAt));
  const pending = new Set(keys);
  const done = (key: string) => {
    pending.delete(key);
    if ((ctx.recovering.get(key) ?? 0) <= lastAt) ctx.recovering.delete(key);
  };
  // Bounded: one look a second from firstAt, until every instance is settled or lastAt (later only while a daemon
  // restarts, by at most a minute).
  const look = () => {
    const now = Date.now();
    const ready = s.daemonReadyAt;
    const settling = ready === null || now - ready < DAEMON_SETTLE_MS;
    // A daemon started since the fault relaunches every instance at once: it gets the same patience, from its settling.
    const deadline =
      ready !== null && ready > from ? Math.max(lastAt, ready + DAEMON_SETTLE_MS + RECOVERY_PATIENCE_MS) : lastAt;
    for (const key of [...pending]) {
      const t = s.tracks.get(key);
      if (excused(t, from) || !t) done(key);
      else if (!settling && running(t)) {
        check(s, 'recovered-after-fault', true, () => '');
        done(key);
      } else if (!settling && now >= deadline) {
        check(
          s,
          'recovered-after-fault',
          false,
          () =>
            `${key}: ${t.status?.state ?? 'unknown'} at ${since(s, now)}, ${Math.round((now - endsAt) / 1000)} s after the ${kind} that struck it at ${since(s, from)} ended`,
        );
        done(key);
      } else if (now >= deadline + 60_000) done(key);
    }
    if (pending.size > 0) ctx.later(1000, look);
  };
  ctx.later(firstAt - Date.now(), look);
}
