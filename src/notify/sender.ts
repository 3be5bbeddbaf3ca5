import { setTimeout as sleep } from 'node:timers/promises';
import type { NotifyFormat } from '../config/sections/notification.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';

/** What one attempt at delivering a message came to. */
export interface Attempt {
  ok: boolean;
  /** Worth another try later: a 429, a 5xx, an SMTP 4xx, a transport error. */
  retryable: boolean;
  /** The service's own hint (`Retry-After`, Matrix's `retry_after_ms`, Telegram's `retry_after`); null if none. */
  retryAfterMs: number | null;
  /** For the log line: `HTTP 503`, never a URL or a token. */
  problem: string;
}

export const DELIVERED: Attempt = { ok: true, retryable: false, retryAfterMs: null, problem: '' };
/** A failure with no hint from the service. */
export function failed(problem: string, retryable: boolean): Attempt {
  return { ok: false, retryable, retryAfterMs: null, problem };
}

/** One message: delivers itself once; called again, with the same content, for each retry. */
export type Delivery = (signal: AbortSignal) => Promise<Attempt>;

export interface QueueOptions {
  /** Where the route was configured (`Notification.Routes[0]`), for log lines: never the URL, which holds a token. */
  label: string;
  /** What kind of destination it is (`Ntfy`, `Email`), for log lines beside the label. */
  destination: string;
  /** Further attempts after a retryable failure. */
  retries: number;
  /** First back-off; doubles per attempt. The service's own retry hint takes precedence. */
  retryBaseMs: number;
  log: Logger;
  /** Messages waiting beyond this drop the oldest (default 100). */
  maxQueue?: number;
  /** How long `stop()` lets queued and in-flight messages finish (default 2 s). */
  stopWaitMs?: number;
}

/**
 * One destination's queue: messages are delivered one at a time, in order, each retried after the service's own
 * retry hint or an exponential back-off. Each destination has its own, so one that is rate-limited or down delays no
 * other. What a destination is (HTTP, SMTP, a command) is the delivery's business; the rules are here, once.
 */
export function createSender(opts: QueueOptions) {
  const maxQueue = opts.maxQueue ?? 100;
  // Every line names the route and the kind of destination: never its URL or token.
  const where = { route: opts.label, destination: opts.destination };
  const queue: Delivery[] = [];
  const halt = new AbortController();
  let pumping: Promise<void> | null = null;
  let stopped = false;

  const attempt = async (delivery: Delivery): Promise<Attempt> => {
    try {
      return await delivery(halt.signal);
    } catch (err) {
      return failed(describeError(err), !halt.signal.aborted);
    }
  };

  const deliver = async (delivery: Delivery): Promise<void> => {
    for (let n = 0; ; n++) {
      const result = await attempt(delivery);
      if (result.ok) return;
      if (!result.retryable || n >= opts.retries || halt.signal.aborted) {
        opts.log.warn('chat webhook refused or unreachable; message dropped', {
          ...where,
          problem: result.problem,
          attempts: n + 1,
        });
        return;
      }
      // At most a minute, the service's hint included.
      const delay = Math.min(60_000, result.retryAfterMs ?? opts.retryBaseMs * 2 ** n);
      opts.log.debug('chat webhook: retrying', { ...where, problem: result.problem, delayMs: delay });
      if (!(await sleep(delay, true, { signal: halt.signal }).catch(() => false))) return; // stopped
    }
  };

  const pump = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined && !halt.signal.aborted; next = queue.shift()) {
      await deliver(next);
    }
    pumping = null;
  };

  return {
    /** Queues one message; never throws, never waits. */
    send(delivery: Delivery): void {
      try {
        if (stopped) return;
        queue.push(delivery);
        if (queue.length > maxQueue) {
          queue.shift();
          opts.log.warn('chat webhook queue full; dropped the oldest message', { ...where, queued: queue.length });
        }
        pumping ??= pump().catch((err: unknown) => {
          pumping = null;
          opts.log.error('chat webhook sender failed', { ...where, error: describeError(err) });
        });
      } catch {
        // Never throw into the emitter (mitt calls handlers synchronously).
      }
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      if (pumping) await Promise.race([pumping, sleep(opts.stopWaitMs ?? 2000, undefined, { ref: false })]);
      if (queue.length > 0 || pumping)
        opts.log.warn('chat webhook: gave up on unsent messages at shutdown', { ...where, unsent: queue.length });
      queue.length = 0;
      halt.abort();
      await pumping;
    },
  };
}

/** What every destination gets besides its target and the notice. */
export interface DeliveryContext {
  /** The instance's display name (`Name`), where it has one. */
  name?: string;
  /** A Webhook's shape; the other destinations have their own. */
  format: NotifyFormat;
  /** Per attempt: one HTTP request, one SMTP session, one run of a command. */
  timeoutMs: number;
  /** The most of an HTTP service's answer read (`Answers.NotificationMaxKilobytes`). */
  maxAnswerBytes: number;
  /** More certificate authorities for SMTP's TLS, beside the system's (a test's own; NODE_EXTRA_CA_CERTS otherwise). */
  ca?: string;
}
export type Sender = ReturnType<typeof createSender>;
