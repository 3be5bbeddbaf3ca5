import { randomUUID } from 'node:crypto';
import type { Notice } from '../../bus.ts';
import type { Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';
import { httpAttempt, jsonAnswer } from './http.ts';
import { plainText, viewOf } from './view.ts';

export interface MatrixTarget {
  type: 'Matrix';
  Homeserver: string;
  RoomId: string;
  AccessToken: string;
}

const html = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** An `m.room.message` of type `m.text`: the plain body, and the same as HTML with the title in bold. */
export function matrixContent(n: Notice, name: string | undefined) {
  const view = viewOf(n, name);
  const fields = view.fields.map((f) => `<br>${html(f.name)}: ${html(f.value)}`).join('');
  return {
    msgtype: 'm.text',
    body: plainText(view),
    format: 'org.matrix.custom.html',
    formatted_body: `<strong>${html(view.title)}</strong><br>${html(view.message)}${fields}`,
  };
}

/** A 429's `{"errcode":"M_LIMIT_EXCEEDED","retry_after_ms":N}`. */
const retryAfterMs = (body: string): number | null => {
  const ms = jsonAnswer(body)?.retry_after_ms;
  return typeof ms === 'number' && ms >= 0 ? ms : null;
};

/**
 * `PUT /_matrix/client/v3/rooms/<room>/send/m.room.message/<txn>`. The transaction id is made once per notice, so a
 * retry after a lost answer is the same event to the homeserver, not a second message.
 */
export function matrixDelivery(t: MatrixTarget, n: Notice, ctx: DeliveryContext): Delivery {
  const base = t.Homeserver.replace(/\/+$/, '');
  const url = `${base}/_matrix/client/v3/rooms/${encodeURIComponent(t.RoomId)}/send/m.room.message/${randomUUID()}`;
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${t.AccessToken}` };
  const body = JSON.stringify(matrixContent(n, ctx.name));
  return (signal) => httpAttempt(url, { method: 'PUT', headers, body }, signal, ctx, retryAfterMs);
}
