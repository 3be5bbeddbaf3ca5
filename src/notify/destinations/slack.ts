import type { Notice } from '../../bus.ts';
import { clip } from '../payload.ts';
import type { Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';
import { postJson } from './http.ts';
import { plainText, viewOf } from './view.ts';

export interface SlackTarget {
  type: 'Slack';
  /** An incoming-webhook URL, its token in the path: never logged. */
  url: string;
}

/** Slack's Block Kit limits: a section's text 3000 characters, at most 10 fields of 2000. */
const SECTION_TEXT = 3000;
const FIELDS = 10;
const FIELD_TEXT = 2000;

/** mrkdwn treats `&`, `<` and `>` as markup: escaped so a server's text is shown as written. */
const mrkdwn = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * `{text, blocks}`, as Slack's incoming webhooks take it: `text` is the whole notice (the notification's line, and
 * what Mattermost and Rocket.Chat show), the blocks the same laid out (a bold title, the message, the fields).
 */
export function slackPayload(n: Notice, name: string | undefined) {
  const view = viewOf(n, name);
  const blocks: unknown[] = [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: clip(`*${mrkdwn(view.title)}*\n${mrkdwn(view.message)}`, SECTION_TEXT) },
    },
  ];
  if (view.fields.length > 0)
    blocks.push({
      type: 'section',
      fields: view.fields
        .slice(0, FIELDS)
        .map((f) => ({ type: 'mrkdwn', text: clip(`*${mrkdwn(f.name)}*\n${mrkdwn(f.value)}`, FIELD_TEXT) })),
    });
  return { text: mrkdwn(plainText(view)), blocks };
}

export function slackDelivery(t: SlackTarget, n: Notice, ctx: DeliveryContext): Delivery {
  return postJson(t.url, slackPayload(n, ctx.name), ctx);
}
