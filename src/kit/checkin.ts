import { createLogger, type Logger } from '../log.ts';
import { AnswerTooLargeError, readCapped } from './capped-body.ts';
import type { Settings } from './settings.ts';

/** The engine pings every 15 s (its `WatchdogApi.cs`). */
export const DEFAULT_CHECKIN_SECONDS = 15;

/** The watchdog answers an empty body or a word. */
const CHECKIN_ANSWER_CAP_BYTES = 64_000;

export interface CheckinOptions {
  /** `watchdog.key`, `watchdog.baseUrl`, `watchdog.token`: all three are needed. */
  key: string | undefined;
  baseUrl: string | undefined;
  token: string | undefined;
  /** Seconds from the start of one attempt to the next. */
  intervalSeconds?: number;
  /** Per-request timeout; the engine's 100 s HttpClient default is far longer than a watchdog waits. */
  timeoutMs?: number;
  userAgent?: string;
  log?: Logger;
  /** After every attempt. */
  onResult?: (result: CheckinResult) => void;
}

export interface CheckinResult {
  ok: boolean;
  /** HTTP status, or null when no answer came (refused, timed out). */
  status: number | null;
  /** Status text, or the transport error. */
  reason: string;
}

export interface Checkins {
  /** False without key, base URL and token (or with a base URL that is not one). */
  readonly enabled: boolean;
  readonly url: string | undefined;
  /** One check-in now; never rejects (null when disabled or stopped). */
  pingNow(): Promise<CheckinResult | null>;
  /** Stops the timer and aborts an attempt in flight. */
  stop(): Promise<void>;
}

/**
 * The RFC 3986 resolution the engine's `new Uri(base, relative)` does, mirrored: `http://h/wd` loses `wd` (only
 * `http://h/wd/` keeps it), as for real engine servers.
 */
export function checkinUrl(baseUrl: string, key: string): URL {
  return new URL(`server_api/${encodeURIComponent(key)}/ping`, baseUrl);
}

/** Check-in options from the engine cvars (`watchdog.checkin_interval` is ours, for tests). */
export function checkinOptionsFrom(
  settings: Settings,
): Pick<CheckinOptions, 'key' | 'baseUrl' | 'token' | 'intervalSeconds'> {
  return {
    key: settings.string('watchdog.key') || undefined,
    baseUrl: settings.string('watchdog.baseUrl') || undefined,
    token: settings.string('watchdog.token') || undefined,
    intervalSeconds: settings.float('watchdog.checkin_interval', DEFAULT_CHECKIN_SECONDS),
  };
}

/**
 * Checks in at once, then every `intervalSeconds`: `POST` with `Authorization: Basic base64(key:token)`. Failures
 * are logged, never thrown; an attempt still running when the next is due is not doubled.
 *
 * @example
 * const checkins = startCheckins({ ...checkinOptionsFrom(settings), log });
 * // on shutdown:
 * await checkins.stop();
 */
export function startCheckins(opts: CheckinOptions): Checkins {
  const log = opts.log ?? createLogger('kit:checkin');
  const { key, baseUrl, token } = opts;
  const disabled: Checkins = { enabled: false, url: undefined, pingNow: async () => null, stop: async () => {} };
  if (!key || !baseUrl || !token) {
    const missing = [!key && 'watchdog.key', !baseUrl && 'watchdog.baseUrl', !token && 'watchdog.token']
      .filter(Boolean)
      .join(', ');
    log.info(`check-ins off: ${missing} not set (all three are needed)`);
    return disabled;
  }
  let url: URL;
  try {
    url = checkinUrl(baseUrl, key);
  } catch (err) {
    log.error(`check-ins off: watchdog.baseUrl "${baseUrl}" is not an absolute URL`, { error: err });
    return disabled;
  }
  const intervalMs = Math.max(50, (opts.intervalSeconds ?? DEFAULT_CHECKIN_SECONDS) * 1000);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const authorization = `Basic ${Buffer.from(`${key}:${token}`, 'utf8').toString('base64')}`;
  const stopping = new AbortController();
  let inFlight: Promise<CheckinResult> | undefined;
  let stopped = false;

  const attempt = async (): Promise<CheckinResult> => {
    let result: CheckinResult;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { Authorization: authorization, 'User-Agent': opts.userAgent ?? 'game-server-kit' },
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(timeoutMs)]),
      });
      // Drained for the connection's reuse; only the cap fails it.
      const over = await readCapped(res.body, CHECKIN_ANSWER_CAP_BYTES, `the check-in answer of ${url.href}`).then(
        () => null,
        (err: unknown) => (err instanceof AnswerTooLargeError ? err : null),
      );
      result = over
        ? { ok: false, status: res.status, reason: over.message }
        : { ok: res.ok, status: res.status, reason: res.statusText };
    } catch (err) {
      const cause = (err as Error).cause;
      const reason =
        err instanceof Error ? `${err.message}${cause instanceof Error ? `: ${cause.message}` : ''}` : String(err);
      result = { ok: false, status: null, reason };
    }
    if (result.ok) log.debug('checked in', { status: result.status });
    else if (!stopped) log.warn('check-in failed', { url: url.href, status: result.status, reason: result.reason });
    opts.onResult?.(result);
    return result;
  };

  const pingNow = (): Promise<CheckinResult | null> => {
    if (stopped) return Promise.resolve(null);
    inFlight ??= attempt().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  const timer = setInterval(() => void pingNow(), intervalMs);
  void pingNow();
  log.info('checking in with the watchdog', { url: url.href, everySeconds: intervalMs / 1000 });

  return {
    enabled: true,
    url: url.href,
    pingNow,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      stopping.abort();
      await inFlight?.catch(() => undefined);
    },
  };
}
