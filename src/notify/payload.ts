import type { Notice, NoticeKind } from '../bus.ts';
import type { NotifyFormat } from '../config/sections/notification.ts';
import { describeExit } from './messages.ts';

/** Discord's limits (its Embed Limits table), counted in characters as it counts them (code points). */
export const LIMITS = { content: 2000, title: 256, description: 4096, fields: 25, name: 256, value: 1024, total: 6000 };

const RED = 0xe74c3c;
const DARK_RED = 0x992d22;
const BLUE = 0x3498db;
const GREY = 0x95a5a6;

/** Embed colour by kind: what went wrong red, what keeps going wrong darker, maintenance blue, requests grey. */
export const COLOURS: Record<NoticeKind, number> = {
  crash: RED,
  hang: RED,
  loop: DARK_RED,
  failing: DARK_RED,
  'update-installed': BLUE,
  'update-failed': BLUE,
  'scheduled-restart': BLUE,
  stopped: GREY,
  hold: GREY,
  disk: DARK_RED,
  'launch-blocked': RED,
  'update-check': BLUE,
  backup: DARK_RED,
  hub: RED,
};

const TITLES: Record<NoticeKind, string> = {
  crash: 'Crashed',
  hang: 'Hung',
  loop: 'Restart loop',
  failing: 'Failing to start',
  stopped: 'Stopped',
  'update-installed': 'Update installed',
  'update-failed': 'Update failed',
  'scheduled-restart': 'Scheduled restart',
  hold: 'Hold',
  disk: 'Disk space',
  'launch-blocked': 'Cannot launch',
  'update-check': 'Update checks',
  backup: 'Backup failed',
  hub: 'Hub listing',
};

export interface EmbedField {
  name: string;
  value: string;
  inline: boolean;
}
export interface Embed {
  title: string;
  description: string;
  color: number;
  fields: EmbedField[];
  timestamp: string;
}
/** What a webhook is sent; mentions are always off, so a server's text can never ping anyone. */
export type Payload =
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
  const fields: EmbedField[] = [{ name: 'Instance', value: label, inline: true }];
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
    label === '' ? (n.title ?? TITLES[n.kind]) : `${n.title ?? TITLES[n.kind]} · ${label}`,
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
    color: COLOURS[n.kind],
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
export interface NoticeView {
  /** `Crashed · Main server (main)`. */
  title: string;
  message: string;
  fields: Array<{ name: string; value: string }>;
  /** Something went wrong (a crash, a failed update, a low disk) rather than news. */
  urgent: boolean;
}

const URGENT: ReadonlySet<NoticeKind> = new Set([
  'crash',
  'hang',
  'loop',
  'failing',
  'update-failed',
  'disk',
  'launch-blocked',
  'backup',
  'hub',
]);

export function viewOf(n: Notice, name: string | undefined): NoticeView {
  const e = embedOf(n, name);
  return {
    title: e.title,
    message: e.description,
    fields: e.fields.map((f) => ({ name: f.name, value: f.value })),
    urgent: URGENT.has(n.kind),
  };
}

/** Title, message, then one `Name: value` line per field: for a text-only destination (Telegram, email). */
export function plainText(view: NoticeView, withTitle = true): string {
  const lines = [...(withTitle ? [view.title] : []), view.message];
  if (view.fields.length > 0) lines.push('', ...view.fields.map((f) => `${f.name}: ${f.value}`));
  return lines.join('\n');
}
