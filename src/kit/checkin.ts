import { createLogger, type Logger } from '../log.ts';
import { AnswerTooLargeError, readCapped } from './capped-body.ts';
import type { Settings } from './settings.ts';

/** The engine pings every 15 s (its `WatchdogApi.cs`). */
export const DEFAULT_CHECKIN_SECONDS = 15;

/** The most of a check-in's answer read: the watchdog answers an empty body or a word. */
const CHECKIN_ANSWER_CAP_BYTES = 64_000;

export interface CheckinOptions {
  /** `watchdog.key`, `watchdog.baseUrl`, `watchdog.token`: check-ins happen only when all three are set. */
  key: string | undefined;
  baseUrl: string | undefined;
  token: string | undefined;
  /** Seconds between attempts, counted from the start of the previous one (fractions allowed). */
  intervalSeconds?: number;
  /** Per-request timeout; the engine's 100 s HttpClient default is far longer than a watchdog waits. */
  timeoutMs?: number;
  userAgent?: string;
  log?: Logger;
  /** Called after every attempt, for games that track their connection to the watchdog. */
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
  /** False when key, base URL or token is missing (or the base URL is not a URL): nothing is sent. */
  readonly enabled: boolean;
  readonly url: string | undefined;
  /** Sends one check-in now; resolves with its result, never rejects (null when disabled or stopped). */
  pingNow(): Promise<CheckinResult | null>;
  /** Stops the timer and aborts an attempt in flight; resolves once nothing is left running. */
  stop(): Promise<void>;
}

/**
 * `new URL('server_api/<key>/ping', baseUrl)`, the same RFC 3986 resolution the engine's `new Uri(base,
 * relative)` does: `http://h:5000` and `http://h:5000/` both give `http://h:5000/server_api/<key>/ping`,
 * but `http://h/wd` loses `wd` (only `http://h/wd/` keeps it). We mirror that rather than fix it, so a
 * base URL behaves the same for our kit and for real engine servers.
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
 * Checks in with the watchdog: the first ping at once, then every `intervalSeconds`. `POST` with
 * `Authorization: Basic base64(key:token)` and no body. Failures are logged with status and reason and
 * never thrown; an attempt still running when the next is due is not doubled up.
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
      // Drained, so the connection can be reused; the status has answered already, so only the cap fails it.
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
    if (inFlight) return inFlight;
    const current = attempt().finally(() => {
      if (inFlight === current) inFlight = undefined;
    });
    inFlight = current;
    return current;
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
