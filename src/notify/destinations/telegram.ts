import type { Notice } from '../../bus.ts';
import { clip } from '../payload.ts';
import type { Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';
import { httpAttempt, jsonAnswer } from './http.ts';
import { plainText, viewOf } from './view.ts';

export interface TelegramTarget {
  type: 'Telegram';
  BotToken: string;
  ChatId: string;
  /** `https://api.telegram.org` unless a local Bot API server is used. */
  ApiUrl: string;
}

/** Telegram's limit on a message's text, in characters. */
const TEXT_MAX = 4096;

/** A 429's `{"ok":false,"error_code":429,"parameters":{"retry_after":N}}`, N in seconds. */
const retryAfterMs = (body: string): number | null => {
  const parameters = jsonAnswer(body)?.parameters;
  const s = typeof parameters === 'object' && parameters !== null ? Reflect.get(parameters, 'retry_after') : undefined;
  return typeof s === 'number' && s >= 0 ? s * 1000 : null;
};

/** `POST <ApiUrl>/bot<token>/sendMessage` with the notice as plain text (no parse mode: nothing to escape). */
export function telegramDelivery(t: TelegramTarget, n: Notice, ctx: DeliveryContext): Delivery {
  const url = `${t.ApiUrl.replace(/\/+$/, '')}/bot${t.BotToken}/sendMessage`;
  const text = clip(plainText(viewOf(n, ctx.name)), TEXT_MAX);
  const body = JSON.stringify({ chat_id: t.ChatId, text, disable_web_page_preview: true });
  return (signal) =>
    httpAttempt(
      url,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body },
      signal,
      ctx,
      retryAfterMs,
    );
}
