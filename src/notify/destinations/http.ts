import { AnswerTooLargeError, readCapped } from '../../kit/capped-body.ts';
import type { Attempt, Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';

/**
 * An attempt's caps: its time (`Timing.WebhookTimeoutSeconds`) and the most of the service's answer read
 * (`Answers.NotificationMaxKilobytes`: a chat service answers with the message it posted, a few kB).
 */
export type AttemptCap = Pick<DeliveryContext, 'timeoutMs' | 'maxAnswerBytes'>;

/** `Retry-After` as seconds (fractions allowed, as chat services send) or an HTTP date; null if absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A service's own retry hint in its answer's body (Matrix's `retry_after_ms`); null where it gives none. */
export type BodyHint = (body: string) => number | null;

/** A JSON answer's field, or undefined: an answer that is not JSON simply has no hint. */
export function jsonAnswer(body: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One HTTP request as a delivery attempt: a 2xx delivered it, a 429 or a 5xx may be tried again after the service's
 * hint (`Retry-After`, else `hint` on the body), anything else is final. The answer is read, capped, to free the
 * connection; the URL is never part of a problem, since it may hold a token.
 */
export async function httpAttempt(
  url: string,
  init: { method: 'POST' | 'PUT'; headers: Record<string, string>; body: string },
  signal: AbortSignal,
  cap: AttemptCap,
  hint?: BodyHint,
): Promise<Attempt> {
  const res = await fetch(url, { ...init, signal: AbortSignal.any([signal, AbortSignal.timeout(cap.timeoutMs)]) });
  let body: string;
  try {
    body = (await readCapped(res.body, cap.maxAnswerBytes, 'its answer', 'Answers.NotificationMaxKilobytes')).toString(
      'utf8',
    );
  } catch (err) {
    // One answering past the cap would answer so again: not retried.
    if (err instanceof AnswerTooLargeError)
      return { ok: false, retryable: false, retryAfterMs: null, problem: `HTTP ${res.status}, ${err.message}` };
    body = '';
  }
  return {
    ok: res.ok,
    retryable: res.status === 429 || res.status >= 500,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) ?? (res.ok ? null : (hint?.(body) ?? null)),
    problem: `HTTP ${res.status}`,
  };
}

/** A POST of `payload` as JSON to `url` (a webhook, Slack, the Json destination), each attempt within `cap`. */
export function postJson(url: string, payload: unknown, cap: AttemptCap): Delivery {
  const body = JSON.stringify(payload);
  return (signal) =>
    httpAttempt(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }, signal, cap);
}
