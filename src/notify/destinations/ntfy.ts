import type { Notice } from '../../bus.ts';
import type { Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';
import { httpAttempt } from './http.ts';
import { plainText, viewOf } from './view.ts';

export interface NtfyTarget {
  type: 'Ntfy';
  /** The topic's URL (`https://ntfy.sh/mytopic`); anyone knowing it can read the topic, so it is a secret. */
  url: string;
  /** An access token, sent as `Authorization: Bearer`. */
  token: string | null;
}

/**
 * A header value as ntfy takes it: plain when ASCII, else RFC 2047's `=?UTF-8?B?…?=` (ntfy decodes encoded words
 * in Title and Tags), since HTTP header values are Latin-1 at best.
 */
export function headerValue(s: string): string {
  return /^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}

/** `POST <topic URL>`: the message as the body, the title, a priority (4 "high" for trouble) and the kind as a tag. */
export function ntfyDelivery(t: NtfyTarget, n: Notice, ctx: DeliveryContext): Delivery {
  const view = viewOf(n, ctx.name);
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=utf-8',
    Title: headerValue(view.title),
    Priority: view.urgent ? '4' : '3',
    Tags: headerValue(view.urgent ? `warning,${n.kind}` : n.kind),
  };
  if (t.token) headers.Authorization = `Bearer ${t.token}`;
  const body = plainText(view, false);
  return (signal) => httpAttempt(t.url, { method: 'POST', headers, body }, signal, ctx);
}
