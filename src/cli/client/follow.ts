import { monotonicMs } from '../../clock.ts';
import { formatBytes } from '../../store/disk-space.ts';
import type { ControlAction } from '../../supervisor/contract.ts';
import { ClientError } from './errors.ts';
import { type Endpoint, fetchStatus } from './http.ts';
import { formatDuration, type StatusRow } from './status-table.ts';

/** How a followed control request ended; `text` is what the operator reads (`running, pid 4242, revision 7`). */
type Outcome = { ok: boolean; text: string; status: StatusRow; ms: number };

/** `last exit: crash, exit code 1: <the server's last line>`, `last exit: launch failed: …`. */
function lastExitText(s: StatusRow): string {
  const e = s.lastExit;
  if (!e) return '';
  const why = e.detail ? `: ${e.detail}` : '';
  if (e.reason === 'launch-failed') return `last exit: launch failed${why}`;
  const how = e.signal !== null ? `signal ${e.signal}` : e.code !== null ? `exit code ${e.code}` : 'status unknown';
  return `last exit: ${e.reason}, ${how}${why}`;
}

/** `, on the data of backup X (the data it replaced is backup Y)` when a restore ended between the two statuses. */
function dataText(before: StatusRow, now: StatusRow): string {
  const r = now.restore;
  if (!r?.ok || r.at === before.restore?.at) return '';
  return `, on the data of backup ${r.id ?? '?'} (the data it replaced is backup ${r.saved ?? '?'})`;
}

const running = (s: StatusRow) => `running, pid ${s.pid ?? '?'}, revision ${s.revision ?? '(none)'}`;

/** The outcome of `action` from `before` to `now` (`pending`: an update was seen on the way); null: keep polling. */
export function judge(
  action: ControlAction,
  before: StatusRow,
  now: StatusRow,
  pending: boolean,
): Omit<Outcome, 'ms'> | null {
  const done = (ok: boolean, text: string) => ({ ok, text, status: now });
  if (now.state === 'exited') return done(false, 'the watchdog is shutting down');
  if (now.state === 'stopped.failing') {
    const why = [`${now.startupFailures ?? '?'} startup failures`, lastExitText(now)].filter(Boolean).join('; ');
    return done(false, `failing to start (${why}); it stays stopped until a restart or a new build`);
  }
  const relaunched = now.state === 'server.running' && now.pid != null && now.pid !== before.pid;
  switch (action) {
    case 'stop':
      return now.state === 'stopped.idle' ? done(true, 'stopped') : null;
    case 'restart':
      if (relaunched) return done(true, running(now));
      return now.state === 'stopped.idle' ? done(false, 'stopped before it ran again (another stop request?)') : null;
    case 'rollback':
      if (relaunched && now.revision === before.revision && before.revision !== null) {
        return done(
          false,
          `${running(now)}, but the revision did not change: the rollback failed (see the daemon log)`,
        );
      }
      if (relaunched) return done(true, `${running(now)} (was ${before.revision ?? '(none)'})${dataText(before, now)}`);
      if (now.state !== 'stopped.idle') return null;
      return now.revision !== before.revision
        ? done(true, `stopped, rolled back to revision ${now.revision ?? '(none)'}`)
        : done(false, 'stopped, still on the same build: the rollback failed (see the daemon log)');
    case 'restore': {
      const r = now.restore;
      if (!r || r.at === before.restore?.at) return null;
      if (!r.ok) return done(false, `the restore failed: ${r.error ?? 'no reason given'}; the data is as it was`);
      if (relaunched) return done(true, `${running(now)}${dataText(before, now)}`);
      return now.state === 'stopped.idle' ? done(true, `stopped${dataText(before, now)}`) : null;
    }
    case 'update':
      if (now.checking === true || now.state === 'updating') return null;
      if (relaunched && pending) {
        return now.revision === before.revision
          ? done(false, `${running(now)}: the update was not installed (see the daemon log)`)
          : done(true, running(now));
      }
      if (now.updatePending !== true && !pending) {
        // A daemon that reports its checks: "no update" only from a check that ended after the request and worked.
        const check = now.updateCheck;
        if (check !== undefined) {
          if (check === null || check.at === before.updateCheck?.at) return null;
          if (check.result === 'failed')
            return done(false, `the update check failed: ${check.error ?? 'no reason given'}; the instance runs on`);
        }
        return done(true, `no update available; ${now.state === 'server.running' ? running(now) : now.state}`);
      }
      if (now.state.startsWith('stopped.'))
        return done(true, `an update is available; the instance is stopped, so it is installed at its next start`);
      return null;
  }
}

/** `downloading 12.3 MB of 200 MB, 4.1 MB/s, about 46s left`; null when none runs. */
export function downloadLine(s: StatusRow): string | null {
  const d = s.download;
  if (!d) return null;
  const of = d.total !== null ? ` of ${formatBytes(d.total)}` : '';
  const rate = d.bytesPerSecond !== null ? `, ${formatBytes(d.bytesPerSecond)}/s` : '';
  const eta = d.etaSeconds !== null ? `, about ${formatDuration(d.etaSeconds)} left` : '';
  return `downloading ${formatBytes(d.bytes)}${of}${rate}${eta}`;
}

/** Polls the instance's status after a control request until `judge` sees an outcome, or `timeoutMs` passes. */
export async function followOutcome(
  ep: Endpoint,
  action: ControlAction,
  before: StatusRow,
  opts: { timeoutMs: number; startedAt?: number; onStatus?: (s: StatusRow) => void },
): Promise<Outcome> {
  const start = opts.startedAt ?? monotonicMs();
  const deadline = start + opts.timeoutMs;
  let pending = false;
  let last = before;
  for (;;) {
    const now = await fetchStatus(ep, Math.max(1000, Math.min(10_000, deadline - monotonicMs())));
    last = now;
    opts.onStatus?.(now);
    if (now.updatePending === true || now.state === 'updating') pending = true;
    const outcome = judge(action, before, now, pending);
    if (outcome) return { ...outcome, ms: monotonicMs() - start };
    if (monotonicMs() >= deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new ClientError(
    `timed out after ${opts.timeoutMs / 1000} s waiting for the ${action} of ${ep.key}; it is ${last.state} now`,
    1,
  );
}
