import type { AlertKind, BusEvents, MaintenanceKind, Notice, NoticeKind } from '../bus.ts';
import { formatDelay } from './messages.ts';

/** An instance's current server as its `instance:launch` told it; `ms` on the monotonic clock, for the uptime. */
export type LaunchSeen = { ms: number; revision: string | null };

/** Each alert's notice kind and reason. */
const ALERT: Record<AlertKind, [NoticeKind, string]> = {
  crash: ['crash', 'exited on its own'],
  hang: ['hang', 'stopped checking in'],
  'crash-loop': ['loop', 'crashes again and again after checking in'],
  'hang-loop': ['loop', 'hangs again and again after checking in'],
  failing: ['failing', 'exits before checking in, again and again'],
  stopped: ['stopped', 'stopped on request'],
};

/**
 * An alert as a notice. Revision and uptime come from the instance's last launch, when this daemon saw one (an
 * adopted server has none); a server failing to start never ran long enough for an uptime to mean anything.
 */
export function noticeFromAlert(e: BusEvents['instance:alert'], launch: LaunchSeen | undefined, now: number): Notice {
  const [kind, reason] = ALERT[e.kind];
  const n: Notice = { key: e.key, kind, message: e.message, reason, at: e.at };
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
export function noticeFromUpdate(e: BusEvents['instance:update']): Notice | null {
  // `by`: who asked for the build, in the audit's words (`by ops from 10.0.0.5`).
  const asked = e.by ? ` (requested ${e.by})` : '';
  if (e.phase === 'done') {
    const n: Notice = {
      key: e.key,
      kind: 'update-installed',
      message: `Server \`${e.key}\` was updated${e.revision ? ` to revision ${e.revision}` : ''}${asked}.`,
      at: e.at,
    };
    if (e.revision !== undefined) n.revision = e.revision;
    if (e.durationMs !== undefined) n.fields = [{ name: 'Took', value: formatDelay(e.durationMs) }];
    return n;
  }
  if (e.phase === 'failed' && e.during !== 'check') {
    const why = e.error ? ` (${e.error})` : '';
    const message = `Server \`${e.key}\` could not install an update${e.by ? ` requested ${e.by}` : ''}${why}; it keeps the build it had.`;
    const n: Notice = { key: e.key, kind: 'update-failed', message, at: e.at };
    if (e.error) n.reason = e.error;
    return n;
  }
  return null;
}

/** `06:30 UTC on 2026-11-25`: unambiguous wherever the reader is. */
export function utcTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(11, 16)} UTC on ${iso.slice(0, 10)}`;
}

/** A Discord timestamp: each reader sees it in their own time zone, with "in 2 hours" beside it. */
const discordTime = (ms: number) => `<t:${Math.floor(ms / 1000)}:f> (<t:${Math.floor(ms / 1000)}:R>)`;

const MOMENT: Record<string, string> = {
  Now: 'now',
  RoundEnd: 'when its round ends',
  Empty: 'as soon as no players are on',
};
const moment = (when: string | undefined) => (when === undefined ? 'soon' : (MOMENT[when] ?? `by policy ${when}`));

/** What a pending restart is for: its text while pending, its title, and its text once done. */
const WHAT: Record<Exclude<MaintenanceKind, 'hold'>, { text: string; title: string; done: string }> = {
  'scheduled-restart': {
    text: 'will restart for its schedule',
    title: 'Scheduled restart',
    done: 'restarted for its schedule',
  },
  restart: { text: 'will restart (requested)', title: 'Restart', done: 'restarted as requested' },
  update: { text: 'has an update waiting and will restart', title: 'Update restart', done: 'restarted for its update' },
};

const requestedBy = (kind: Exclude<MaintenanceKind, 'hold'>, by: string) =>
  kind === 'update' ? `has an update waiting (requested ${by}) and will restart` : `will restart (requested ${by})`;

/**
 * Maintenance announcements as notices: a restart waiting for its moment (from the schedule, a `?when=` request or
 * a found update) is the `scheduled-restart` kind, a hold the `hold` kind. Told once when it begins, once when done.
 */
export function noticeFromPending(e: BusEvents['instance:maintenance-pending']): Notice {
  const server = `Server \`${e.key}\``;
  if (e.kind === 'hold') {
    const until = e.until === undefined ? '' : ` until ${utcTime(e.until)}`;
    const why = e.reason ? ` (${e.reason})` : '';
    const n: Notice = {
      key: e.key,
      kind: 'hold',
      title: 'Hold',
      message: `${server} is on hold${until}${why}: scheduled restarts and update installs wait; crashes and hangs are still handled.`,
      at: e.at,
    };
    if (e.reason) n.reason = e.reason;
    if (e.until !== undefined) n.fields = [{ name: 'Until', value: discordTime(e.until) }];
    return n;
  }
  const what = WHAT[e.kind];
  const latest = e.deadline ? `, at the latest at ${utcTime(e.deadline)}` : '';
  const fields: Array<{ name: string; value: string }> = [];
  if (e.when) fields.push({ name: 'When', value: e.when });
  if (e.deadline) fields.push({ name: 'Deadline', value: discordTime(e.deadline) });
  const n: Notice = {
    key: e.key,
    kind: 'scheduled-restart',
    title: `${what.title} pending`,
    // A reason is the daemon's own (a memory limit passed): it replaces "(requested)". `by` is the audit's
    // `by ops from 10.0.0.5` (or `with its API token from …`).
    message: `${server} ${e.reason ? `will restart (${e.reason})` : e.by ? requestedBy(e.kind, e.by) : what.text} ${moment(e.when)}${latest}.`,
    fields,
    at: e.at,
  };
  if (e.reason) n.reason = e.reason;
  return n;
}

const HOW: Record<BusEvents['instance:maintenance-done']['how'], string> = {
  done: 'done',
  forced: 'forced',
  released: 'released',
  expired: 'over',
  dropped: 'called off',
};

export function noticeFromDone(e: BusEvents['instance:maintenance-done']): Notice {
  const told = { key: e.key, fields: [{ name: 'Outcome', value: e.how }], at: e.at };
  if (e.kind === 'hold') {
    const goes = e.how === 'released' || e.how === 'expired' ? '; maintenance that waited goes ahead' : '';
    const message = `The hold on server \`${e.key}\` is ${HOW[e.how]}${goes}.`;
    return { ...told, kind: 'hold', title: `Hold ${HOW[e.how]}`, message };
  }
  const what = WHAT[e.kind];
  const server = `Server \`${e.key}\``;
  const message =
    e.how === 'dropped'
      ? `${server}: the pending ${what.title.toLowerCase()} was called off.`
      : e.how === 'forced'
        ? `${server} ${what.done}: forced, its MaxDelayMinutes ran out, so it was shut down gracefully.`
        : `${server} ${what.done}.`;
  return { ...told, kind: 'scheduled-restart', title: `${what.title} ${HOW[e.how]}`, message };
}

const REASON = { resources: "the watchdog's own resources", port: 'the game port is still held' } as const;

/**
 * The first blocked launch of an episode as a notice (`cannot launch `alpha`: the watchdog is out of file
 * descriptors (EMFILE); retrying in 8 s`); null for the retries after it, so an episode is one message however
 * long it lasts. Its end is `noticeFromUnblocked`.
 */
export function noticeFromBlocked(e: BusEvents['instance:launch-blocked']): Notice | null {
  if (e.attempts !== 1) return null;
  return {
    key: e.key,
    kind: 'launch-blocked',
    message: `cannot launch \`${e.key}\`: ${e.message}; retrying in ${formatDelay(e.retryMs)} (with back-off, until it works).`,
    reason: REASON[e.kind],
    at: e.at,
  };
}

/** The launch that worked after blocked ones: the episode the first notice began is over. */
export function noticeFromUnblocked(e: BusEvents['instance:launch-unblocked']): Notice {
  const tries = `${e.attempts} blocked attempt${e.attempts === 1 ? '' : 's'}`;
  return {
    key: e.key,
    kind: 'launch-blocked',
    title: 'Launched again',
    message: `\`${e.key}\` launched again after ${tries}.`,
    reason: `${REASON[e.kind]} no longer blocks it`,
    at: e.at,
  };
}

/**
 * The chat notice for a watched file system going low, and the one when it is back: one each per crossing (the
 * watcher emits `daemon:disk-low` and `daemon:disk-recovered` only on a change), about the host rather than an instance.
 */
export function noticeFromDisk(e: BusEvents['daemon:disk-low'], recovered: boolean): Notice {
  const [title, message] = recovered
    ? ['Disk space recovered', `Disk space is back: ${e.message}.`]
    : ['Disk space low', `Disk space is low: ${e.message}.`];
  return { key: '', kind: 'disk', title, message, fields: [{ name: 'Folder', value: e.path }], at: e.at };
}
