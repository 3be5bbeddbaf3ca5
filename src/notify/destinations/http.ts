import { randomUUID } from 'node:crypto';
import type { Notice } from '../../bus.ts';
import { AnswerTooLargeError, readCapped } from '../../kit/capped-body.ts';
import { clip, plainText, viewOf } from '../payload.ts';
import type { TargetOf } from '../routes.ts';
import { type Attempt, type Delivery, type DeliveryContext, failed } from '../sender.ts';

/** `Retry-After` as seconds (fractions allowed, as chat services send) or an HTTP date; null if absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A JSON answer's field, or undefined: an answer that is not JSON simply has no hint. */
function jsonAnswer(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One HTTP request as a delivery attempt: a 2xx delivered it, a 429 or a 5xx may be tried again after the service's
 * hint (`Retry-After`, else `hint` on the body, as Matrix's `retry_after_ms`), anything else is final. The answer is
 * read, capped, to free the connection; the URL is never part of a problem, since it may hold a token.
 */
async function httpAttempt(
  url: string,
  init: { method: 'POST' | 'PUT'; headers: Record<string, string>; body: string },
  signal: AbortSignal,
  cap: DeliveryContext,
  hint?: (body: string) => number | null,
): Promise<Attempt> {
  const res = await fetch(url, { ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(cap.timeoutMs)]) });
  let body: string;
  try {
    body = (await readCapped(res.body, cap.maxAnswerBytes, 'its answer', 'Answers.NotificationMaxKilobytes')).toString(
      'utf8',
    );
  } catch (err) {
    // One answering past the cap would answer so again: not retried.
    if (err instanceof AnswerTooLargeError) return failed(`HTTP ${res.status}, ${err.message}`, false);
    body = '';
  }
  return {
    ok: res.ok,
    retryable: res.status === 429 || res.status >= 500,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) ?? (res.ok ? null : (hint?.(body) ?? null)),
    problem: `HTTP ${res.status}`,
  };
}

/** A POST of `payload` as JSON to `url` (a webhook, Slack, Json, Telegram). */
export function postJson(
  url: string,
  payload: unknown,
  ctx: DeliveryContext,
  hint?: (body: string) => number | null,
): Delivery {
  const body = JSON.stringify(payload);
  return (signal) =>
    httpAttempt(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }, signal, ctx, hint);
}

/** The notice itself, for a program to read: `{key, kind, title, message, fields, at}` with `at` in ISO 8601. */
export function noticeJson(n: Notice, name: string | undefined) {
  const { title, fields } = viewOf(n, name);
  return { key: n.key, kind: n.kind, title, message: n.message, fields, at: new Date(n.at).toISOString() };
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

/**
 * A header value as ntfy takes it: plain when ASCII, else RFC 2047's `=?UTF-8?B?…?=` (ntfy decodes encoded words
 * in Title and Tags), since HTTP header values are Latin-1 at best.
 */
export function headerValue(s: string): string {
  return /^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}

/** `POST <topic URL>`: the message as the body, the title, a priority (4 "high" for trouble) and the kind as a tag. */
export function ntfyDelivery(t: TargetOf<'Ntfy'>, n: Notice, ctx: DeliveryContext): Delivery {
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

/** Telegram's limit on a message's text, in characters. */
const TEXT_MAX = 4096;

/** A 429's `{"ok":false,"error_code":429,"parameters":{"retry_after":N}}`, N in seconds. */
const telegramRetryAfterMs = (body: string): number | null => {
  const parameters = jsonAnswer(body)?.parameters;
  const s = typeof parameters === 'object' && parameters !== null ? Reflect.get(parameters, 'retry_after') : undefined;
  return typeof s === 'number' && s >= 0 ? s * 1000 : null;
};

/** `POST <ApiUrl>/bot<token>/sendMessage` with the notice as plain text (no parse mode: nothing to escape). */
export function telegramDelivery(t: TargetOf<'Telegram'>, n: Notice, ctx: DeliveryContext): Delivery {
  const url = `${t.ApiUrl.replace(/\/+$/, '')}/bot${t.BotToken}/sendMessage`;
  const text = clip(plainText(viewOf(n, ctx.name)), TEXT_MAX);
  return postJson(url, { chat_id: t.ChatId, text, disable_web_page_preview: true }, ctx, telegramRetryAfterMs);
}

const html = (s: string): string => mrkdwn(s).replace(/"/g, '&quot;');

/** An `m.room.message` of type `m.text`: the plain body, and the same as HTML with the title in bold. */
function matrixContent(n: Notice, name: string | undefined) {
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
const matrixRetryAfterMs = (body: string): number | null => {
  const ms = jsonAnswer(body)?.retry_after_ms;
  return typeof ms === 'number' && ms >= 0 ? ms : null;
};

/**
 * `PUT /_matrix/client/v3/rooms/<room>/send/m.room.message/<txn>`. The transaction id is made once per notice, so a
 * retry after a lost answer is the same event to the homeserver, not a second message.
 */
export function matrixDelivery(t: TargetOf<'Matrix'>, n: Notice, ctx: DeliveryContext): Delivery {
  const base = t.Homeserver.replace(/\/+$/, '');
  const url = `${base}/_matrix/client/v3/rooms/${encodeURIComponent(t.RoomId)}/send/m.room.message/${randomUUID()}`;
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${t.AccessToken}` };
  const body = JSON.stringify(matrixContent(n, ctx.name));
  return (signal) => httpAttempt(url, { method: 'PUT', headers, body }, signal, ctx, matrixRetryAfterMs);
}
