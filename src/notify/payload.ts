import type { Notice, NoticeKind } from '../bus.ts';
import type { NotifyFormat } from '../config/sections/notification.ts';
import { describeExit } from './messages.ts';

/** Discord's limits (its Embed Limits table), counted in characters as it counts them (code points). */
export const LIMITS = { content: 2000, title: 256, description: 4096, fields: 25, name: 256, value: 1024, total: 6000 };

const RED = 0xe74c3c;
const DARK_RED = 0x992d22;
const BLUE = 0x3498db;
const GREY = 0x95a5a6;

/**
 * By kind: the title, the embed colour (what went wrong red, what keeps going wrong darker, maintenance blue, requests
 * grey), and whether it is urgent (something went wrong rather than news) for destinations with priorities.
 */
export const KINDS: Record<NoticeKind, { title: string; colour: number; urgent: boolean }> = {
  crash: { title: 'Crashed', colour: RED, urgent: true },
  hang: { title: 'Hung', colour: RED, urgent: true },
  loop: { title: 'Restart loop', colour: DARK_RED, urgent: true },
  failing: { title: 'Failing to start', colour: DARK_RED, urgent: true },
  stopped: { title: 'Stopped', colour: GREY, urgent: false },
  'update-installed': { title: 'Update installed', colour: BLUE, urgent: false },
  'update-failed': { title: 'Update failed', colour: BLUE, urgent: true },
  'scheduled-restart': { title: 'Scheduled restart', colour: BLUE, urgent: false },
  hold: { title: 'Hold', colour: GREY, urgent: false },
  disk: { title: 'Disk space', colour: DARK_RED, urgent: true },
  'launch-blocked': { title: 'Cannot launch', colour: RED, urgent: true },
  'update-check': { title: 'Update checks', colour: BLUE, urgent: false },
  backup: { title: 'Backup failed', colour: DARK_RED, urgent: true },
  hub: { title: 'Hub listing', colour: RED, urgent: true },
};

export interface Embed {
  title: string;
  description: string;
  color: number;
  fields: Array<{ name: string; value: string; inline: boolean }>;
  timestamp: string;
}
/** What a webhook is sent; mentions are always off, so a server's text can never ping anyone. */
type Payload =
  | { content: string; allowed_mentions: { parse: [] } }
  | { embeds: [Embed]; allowed_mentions: { parse: [] } };

const length = (s: string): number => [...s].length;
/** At most `max` code points, with an ellipsis when cut (never a split surrogate pair). */
export function clip(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatUptime(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** The instance as people know it: `Main server (main)`, or the key alone when it has no other name. */
const instanceLabel = (key: string, name: string | undefined) => (name && name !== key ? `${name} (${key})` : key);

export function embedOf(n: Notice, name?: string): Embed {
  // A notice about the daemon's host (key '') names no instance.
  const label = n.key === '' ? '' : instanceLabel(n.key, name);
  const fields: Embed['fields'] = [{ name: 'Instance', value: label, inline: true }];
  const exit = describeExit(n.exit ?? null);
  if (exit) fields.push({ name: 'Exit', value: exit, inline: true });
  if (n.revision) fields.push({ name: 'Revision', value: n.revision, inline: true });
  if (n.uptimeMs !== undefined) fields.push({ name: 'Uptime', value: formatUptime(n.uptimeMs), inline: true });
  if (n.reason) fields.push({ name: 'Reason', value: n.reason, inline: false });
  for (const f of n.fields ?? []) fields.push({ name: f.name, value: f.value, inline: true });
  const kept = fields
    .filter((f) => f.name.trim() !== '' && f.value.trim() !== '')
    .slice(0, LIMITS.fields)
    .map((f) => ({ ...f, name: clip(f.name, LIMITS.name), value: clip(f.value, LIMITS.value) }));
  const title = clip(
    label === '' ? (n.title ?? KINDS[n.kind].title) : `${n.title ?? KINDS[n.kind].title} · ${label}`,
    LIMITS.title,
  );
  // Within the 6000 total: the description gives way first, then fields from the end.
  const fieldChars = () => kept.reduce((sum, f) => sum + length(f.name) + length(f.value), 0);
  while (kept.length > 1 && length(title) + fieldChars() > LIMITS.total - 100) kept.pop();
  const room = LIMITS.total - length(title) - fieldChars();
  const description = clip(n.message, Math.min(LIMITS.description, room));
  return {
    title,
    description,
    color: KINDS[n.kind].colour,
    fields: kept,
    timestamp: new Date(n.at).toISOString(),
  };
}

/** The JSON body for a notice in a route's format. */
export function payloadOf(n: Notice, format: NotifyFormat, name?: string): Payload {
  if (format === 'Embed') return { embeds: [embedOf(n, name)], allowed_mentions: { parse: [] } };
  return { content: clip(n.message, LIMITS.content), allowed_mentions: { parse: [] } };
}

/** A notice as every non-Discord destination shows it: the embed's title, message and fields, as plain strings. */
export function viewOf(n: Notice, name: string | undefined) {
  const e = embedOf(n, name);
  return {
    title: e.title,
    message: e.description,
    fields: e.fields.map((f) => ({ name: f.name, value: f.value })),
    urgent: KINDS[n.kind].urgent,
  };
}

/** Title, message, then one `Name: value` line per field: for a text-only destination (Telegram, email). */
export function plainText(view: ReturnType<typeof viewOf>, withTitle = true): string {
  const lines = [...(withTitle ? [view.title] : []), view.message];
  if (view.fields.length > 0) lines.push('', ...view.fields.map((f) => `${f.name}: ${f.value}`));
  return lines.join('\n');
}
