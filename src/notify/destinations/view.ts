import type { Notice, NoticeKind } from '../../bus.ts';
import { embedOf } from '../payload.ts';

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
