import { setTimeout as sleep } from 'node:timers/promises';
import { describeError } from '../errors.ts';
import { AnswerTooLargeError, readCapped } from '../kit/capped-body.ts';
import type { Logger } from '../log.ts';
import type { Payload } from './payload.ts';

export interface SenderOptions {
  /** The webhook's URL. It carries the webhook's own token, so it is never logged: `label` is. */
  url: string;
  /** Where the route was configured (`Notification.Routes[0]`), for log lines. */
  label: string;
  /** Further attempts after a 429, a 5xx or a transport error. */
  retries: number;
  /** First back-off; doubles per attempt. A `Retry-After` answer takes precedence. */
  retryBaseMs: number;
  /** Per request. */
  timeoutMs: number;
  log: Logger;
  /** Messages waiting beyond this drop the oldest (default 100). */
  maxQueue?: number;
  /** Ceiling for any back-off, `Retry-After` included (default 60 s). */
  maxDelayMs?: number;
  /** How long `stop()` lets queued and in-flight messages finish (default 2 s). */
  stopWaitMs?: number;
}

export interface WebhookSender {
  /** Queues a JSON body; never throws, never waits. */
  send(payload: Payload): void;
  stop(): Promise<void>;
}

interface Attempt {
  ok: boolean;
  retryable: boolean;
  retryAfterMs: number | null;
  problem: string;
}

/** The most of a webhook's answer read: a chat service answers with the message it posted, a few kB. */
const WEBHOOK_ANSWER_CAP_BYTES = 64_000;

/** `Retry-After` as seconds (fractions allowed, as chat services send) or an HTTP date; null if absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * One webhook's queue: bodies are posted one at a time, in order, each retried on a 429 (after its `Retry-After`),
 * a 5xx or a transport error. Each webhook has its own sender, so one that is rate-limited or down delays no other.
 *
 * @example
 * const hook = createWebhookSender({ url, label: 'Notification.ChatWebhook', retries: 3, retryBaseMs: 1000, timeoutMs: 10_000, log });
 * hook.send({ content: 'Server `main` …', allowed_mentions: { parse: [] } });
 * await hook.stop();
 */
export function createWebhookSender(opts: SenderOptions): WebhookSender {
  const maxQueue = opts.maxQueue ?? 100;
  const maxDelayMs = opts.maxDelayMs ?? 60_000;
  const route = opts.label;
  const queue: string[] = [];
  const halt = new AbortController();
  let pumping: Promise<void> | null = null;
  let stopped = false;

  const post = async (body: string): Promise<Attempt> => {
    try {
      const res = await fetch(opts.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.any([halt.signal, AbortSignal.timeout(opts.timeoutMs)]),
      });
      try {
        await readCapped(res.body, WEBHOOK_ANSWER_CAP_BYTES, 'its answer');
      } catch (err) {
        // Read only to free the connection; one answering past the cap would answer so again: not retried.
        if (err instanceof AnswerTooLargeError)
          return { ok: false, retryable: false, retryAfterMs: null, problem: `HTTP ${res.status}, ${err.message}` };
      }
      const retryable = res.status === 429 || res.status >= 500;
      return {
        ok: res.ok,
        retryable,
        retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
        problem: `HTTP ${res.status}`,
      };
    } catch (err) {
      return { ok: false, retryable: !halt.signal.aborted, retryAfterMs: null, problem: describeError(err) };
    }
  };

  const deliver = async (body: string): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const result = await post(body);
      if (result.ok) return;
      if (!result.retryable || attempt >= opts.retries || halt.signal.aborted) {
        opts.log.warn('chat webhook refused or unreachable; message dropped', {
          route,
          problem: result.problem,
          attempts: attempt + 1,
        });
        return;
      }
      const delay = Math.min(maxDelayMs, result.retryAfterMs ?? opts.retryBaseMs * 2 ** attempt);
      opts.log.debug('chat webhook: retrying', { route, problem: result.problem, delayMs: delay });
      try {
        await sleep(delay, undefined, { signal: halt.signal });
      } catch {
        return; // stopped
      }
    }
  };

  const pump = async (): Promise<void> => {
    for (let body = queue.shift(); body !== undefined && !halt.signal.aborted; body = queue.shift()) {
      await deliver(body);
    }
    pumping = null;
  };

  return {
    send(payload) {
      try {
        if (stopped) return;
        queue.push(JSON.stringify(payload));
        if (queue.length > maxQueue) {
          queue.shift();
          opts.log.warn('chat webhook queue full; dropped the oldest message', { route, queued: queue.length });
        }
        pumping ??= pump().catch((err: unknown) => {
          pumping = null;
          opts.log.error('chat webhook sender failed', { route, error: describeError(err) });
        });
      } catch {
        // Never throw into the emitter (mitt calls handlers synchronously).
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const running = pumping;
      if (running) {
        const timer = new AbortController();
        await Promise.race([
          running,
          sleep(opts.stopWaitMs ?? 2000, undefined, { signal: timer.signal }).catch(() => undefined),
        ]);
        timer.abort();
      }
      if (queue.length > 0 || pumping)
        opts.log.warn('chat webhook: gave up on unsent messages at shutdown', { route, unsent: queue.length });
      queue.length = 0;
      halt.abort();
      await pumping;
    },
  };
}
