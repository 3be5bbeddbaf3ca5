import type { AlertKind, BusEvents, Notice, NoticeKind } from '../bus.ts';
import { formatDelay, updateFailedMessage, updateInstalledMessage } from './messages.ts';

type Alert = BusEvents['instance:alert'];
type Update = BusEvents['instance:update'];
/** What the notifier remembers of an instance's current server, from its `instance:launch`. */
export interface LaunchSeen {
  /** When it was seen, on the monotonic clock: the uptime is measured on it. */
  ms: number;
  revision: string | null;
}

const KIND_OF: Record<AlertKind, NoticeKind> = {
  crash: 'crash',
  hang: 'hang',
  'crash-loop': 'loop',
  'hang-loop': 'loop',
  failing: 'failing',
  stopped: 'stopped',
};

const REASON_OF: Record<AlertKind, string> = {
  crash: 'exited on its own',
  hang: 'stopped checking in',
  'crash-loop': 'crashes again and again after checking in',
  'hang-loop': 'hangs again and again after checking in',
  failing: 'exits before checking in, again and again',
  stopped: 'stopped on request',
};

/**
 * An alert as a notice. Revision and uptime come from the instance's last launch, when this daemon saw one (an
 * adopted server has none); a server failing to start never ran long enough for an uptime to mean anything.
 */
export function noticeFromAlert(e: Alert, launch: LaunchSeen | undefined, now: number): Notice {
  const n: Notice = { key: e.key, kind: KIND_OF[e.kind], message: e.message, reason: REASON_OF[e.kind], at: e.at };
  if (e.exit) n.exit = e.exit;
  if (launch) {
    n.revision = launch.revision;
    if (e.kind !== 'failing') n.uptimeMs = Math.max(0, now - launch.ms);
  }
  return n;
}

/**
 * An installed update, or one that could not be installed, as a notice; null for the other phases. A failed check
 * (the CDN or CI server down) is logged and not told: the server runs on, and the next check tries again.
 */
export function noticeFromUpdate(e: Update): Notice | null {
  if (e.phase === 'done') {
    const n: Notice = {
      key: e.key,
      kind: 'update-installed',
      message: updateInstalledMessage(e.key, e.revision, e.by),
      at: e.at,
    };
    if (e.revision !== undefined) n.revision = e.revision;
    if (e.durationMs !== undefined) n.fields = [{ name: 'Took', value: formatDelay(e.durationMs) }];
    return n;
  }
  if (e.phase === 'failed' && e.during !== 'check') {
    const n: Notice = {
      key: e.key,
      kind: 'update-failed',
      message: updateFailedMessage(e.key, e.error, e.by),
      at: e.at,
    };
    if (e.error) n.reason = e.error;
    return n;
  }
  return null;
}
