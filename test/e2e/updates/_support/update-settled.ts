/** "Nothing followed the update request" as a fact: its whole flow is over, and the daemon has moved on. */
import type { RunningDaemon, StatusJson } from '../../../_support/daemon.ts';
import { TOKEN } from '../../_support/updates.ts';
import { waitStatus } from '../../resilience/_support/daemon-crash.ts';

/**
 * Until the update asked for is no longer running or queued (`checking` false in the status: a download, swap or
 * restart it led to would have begun by then) and the running server has had a check-in accepted after `sinceMs`
 * (taken once the outcome was seen): the daemon has gone on past it. Returns that status.
 */
export function updateSettled(d: RunningDaemon, key: string, sinceMs: number): Promise<StatusJson> {
  return waitStatus(
    d,
    key,
    TOKEN,
    'the update flow over and a later check-in',
    (s) =>
      (s as StatusJson & { checking?: boolean }).checking === false &&
      s.lastCheckinAt !== null &&
      Date.parse(s.lastCheckinAt) > sinceMs,
    20_000,
  );
}
