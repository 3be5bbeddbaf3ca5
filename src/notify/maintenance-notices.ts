import type { BusEvents, MaintenanceKind, Notice } from '../bus.ts';

type Pending = BusEvents['instance:maintenance-pending'];
type Done = BusEvents['instance:maintenance-done'];

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

const asked = (kind: Exclude<MaintenanceKind, 'hold'>, by: string) =>
  kind === 'update' ? `has an update waiting (requested ${by}) and will restart` : `will restart (requested ${by})`;

/**
 * Maintenance announcements as notices: a restart waiting for its moment (from the schedule, a `?when=` request or
 * a found update) is the `scheduled-restart` kind, a hold the `hold` kind. Told once when it begins, once when done.
 */
export function noticeFromPending(e: Pending): Notice {
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
    message: `${server} ${e.reason ? `will restart (${e.reason})` : e.by ? asked(e.kind, e.by) : what.text} ${moment(e.when)}${latest}.`,
    fields,
    at: e.at,
  };
  if (e.reason) n.reason = e.reason;
  return n;
}

const HOW: Record<Done['how'], string> = {
  done: 'done',
  forced: 'forced',
  released: 'released',
  expired: 'over',
  dropped: 'called off',
};

export function noticeFromDone(e: Done): Notice {
  const fields = [{ name: 'Outcome', value: e.how }];
  if (e.kind === 'hold') {
    const goes = e.how === 'released' || e.how === 'expired' ? '; maintenance that waited goes ahead' : '';
    return {
      key: e.key,
      kind: 'hold',
      title: `Hold ${HOW[e.how]}`,
      message: `The hold on server \`${e.key}\` is ${HOW[e.how]}${goes}.`,
      fields,
      at: e.at,
    };
  }
  const what = WHAT[e.kind];
  const server = `Server \`${e.key}\``;
  const message =
    e.how === 'dropped'
      ? `${server}: the pending ${what.title.toLowerCase()} was called off.`
      : e.how === 'forced'
        ? `${server} ${what.done}: forced, its MaxDelayMinutes ran out, so it was shut down gracefully.`
        : `${server} ${what.done}.`;
  return {
    key: e.key,
    kind: 'scheduled-restart',
    title: `${what.title} ${HOW[e.how]}`,
    message,
    fields,
    at: e.at,
  };
}
