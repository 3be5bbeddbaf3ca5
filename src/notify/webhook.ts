import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus, BusEvents } from '../bus.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';

export interface WebhookOptions {
  /** `Notification.ChatWebhook`. It carries the webhook's own token, so it is never logged. */
  url: string;
  bus: Bus;
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

export interface WebhookNotifier {
  stop(): Promise<void>;
}

interface Attempt {
  ok: boolean;
  retryable: boolean;
  retryAfterMs: number | null;
  problem: string;
}

/** `Retry-After` as seconds (fractions allowed, as chat services send) or an HTTP date; null if absent or bad. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Posts every `instance:alert` to the chat webhook as `{"content": message, "allowed_mentions": {"parse": []}}`
 * (the real watchdog's `NotificationManager.cs` sends `allowed-mentions`, a key Discord ignores). Fire and forget:
 * the bus handler only queues, so an emitter never waits or sees an error; one message is sent at a time, in order.
 *
 * @example
 * const notifier = createWebhookNotifier({ url, bus, retries: 3, retryBaseMs: 1000, timeoutMs: 10_000, log });
 * await notifier.stop();
 */
export function createWebhookNotifier(opts: WebhookOptions): WebhookNotifier {
  const maxQueue = opts.maxQueue ?? 100;
  const maxDelayMs = opts.maxDelayMs ?? 60_000;
  const queue: string[] = [];
  const halt = new AbortController();
  let pumping: Promise<void> | null = null;
  let stopped = false;

  const post = async (content: string): Promise<Attempt> => {
    try {
      const res = await fetch(opts.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ content, allowed_mentions: { parse: [] } }),
        signal: AbortSignal.any([halt.signal, AbortSignal.timeout(opts.timeoutMs)]),
      });
      await res.arrayBuffer().catch(() => undefined);
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

  const deliver = async (content: string): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const result = await post(content);
      if (result.ok) return;
      if (!result.retryable || attempt >= opts.retries || halt.signal.aborted) {
        opts.log.warn('chat webhook refused or unreachable; message dropped', {
          problem: result.problem,
          attempts: attempt + 1,
        });
        return;
      }
      const delay = Math.min(maxDelayMs, result.retryAfterMs ?? opts.retryBaseMs * 2 ** attempt);
      opts.log.debug('chat webhook: retrying', { problem: result.problem, delayMs: delay });
      try {
        await sleep(delay, undefined, { signal: halt.signal });
      } catch {
        return; // stopped
      }
    }
  };

  const pump = async (): Promise<void> => {
    for (let content = queue.shift(); content !== undefined && !halt.signal.aborted; content = queue.shift()) {
      await deliver(content);
    }
    pumping = null;
  };

  const onAlert = (e: BusEvents['instance:alert']): void => {
    try {
      if (stopped) return;
      queue.push(e.message);
      if (queue.length > maxQueue) {
        queue.shift();
        opts.log.warn('chat webhook queue full; dropped the oldest message', { queued: queue.length });
      }
      pumping ??= pump().catch((err: unknown) => {
        pumping = null;
        opts.log.error('chat webhook sender failed', { error: describeError(err) });
      });
    } catch {
      // Never throw into the emitter (mitt calls handlers synchronously).
    }
  };

  opts.bus.on('instance:alert', onAlert);

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      opts.bus.off('instance:alert', onAlert);
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
        opts.log.warn('chat webhook: gave up on unsent messages at shutdown', { unsent: queue.length });
      queue.length = 0;
      halt.abort();
      await pumping;
    },
  };
}
