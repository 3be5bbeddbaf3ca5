import { request } from 'node:http';
import type { AnswerCap } from '../config/sections/answers.ts';
import { readCapped } from '../kit/capped-body.ts';

/**
 * The watchdog's side of the game server's API: `POST /update` and `POST /shutdown` (as the real watchdog's
 * `ServerInstance.cs`) and the player count of `GET /status`. 127.0.0.1 first, [::1] only when refused (`localhost`
 * often resolves to ::1 first, and the engine listens on IPv4); a fresh connection per request, so nothing lingers.
 */
const HOSTS = ['127.0.0.1', '::1'] as const;

/** `body` is null when it was not read whole (cut short, too slow, too large). */
type Answer = { status: number; body: string | null };

/** `Answers.ServerMaxKilobytes` and the wait, body included. */
export type ServerCap = Pick<AnswerCap, 'maxBytes' | 'timeoutMs'>;

type Ask = { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string };

function call(
  host: string,
  port: number,
  { method, path, headers, body }: Ask,
  signal: AbortSignal,
  maxBytes: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port,
        path,
        method,
        headers: { ...headers, ...(body === undefined && method === 'POST' ? { 'Content-Length': '0' } : {}) },
        agent: false,
        signal,
      },
      (res) => {
        // The status came back whatever becomes of the body (a shutdown request was delivered).
        const status = res.statusCode ?? 0;
        readCapped(res, maxBytes, `the answer of http://${host}:${port}${path}`).then(
          (body) => resolve({ status, body: body.toString('utf8') }),
          () => resolve({ status, body: null }),
        );
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

async function send(port: number, ask: Ask, cap: ServerCap): Promise<Answer | null> {
  const signal = AbortSignal.timeout(cap.timeoutMs);
  for (const host of HOSTS) {
    try {
      return await call(host, port, ask, signal, cap.maxBytes);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ECONNREFUSED' && code !== 'EADDRNOTAVAIL' && code !== 'EAFNOSUPPORT') return null;
    }
  }
  return null;
}

/**
 * `POST /shutdown` with `WatchdogToken` and `{"Reason": reason}`. True when any HTTP answer came back (the real
 * watchdog does not check the status either).
 */
export async function requestShutdown(
  apiPort: number,
  secret: string,
  reason: string,
  cap: ServerCap,
): Promise<boolean> {
  const headers = { WatchdogToken: secret, 'Content-Type': 'application/json' };
  const body = JSON.stringify({ Reason: reason });
  return (await send(apiPort, { method: 'POST', path: '/shutdown', headers, body }, cap)) !== null;
}

/** `POST /update` with `WatchdogToken` (the game restarts at a convenient moment). True only on a 2xx answer. */
export async function requestUpdate(apiPort: number, secret: string, cap: ServerCap): Promise<boolean> {
  const answer = await send(apiPort, { method: 'POST', path: '/update', headers: { WatchdogToken: secret } }, cap);
  return answer !== null && answer.status >= 200 && answer.status < 300;
}

/** The `players` of the server's `GET /status`, or null when it did not answer with a count within `cap`. */
export async function readPlayers(apiPort: number, cap: ServerCap): Promise<number | null> {
  const answer = await send(apiPort, { method: 'GET', path: '/status' }, cap);
  if (answer === null || answer.body === null || answer.status < 200 || answer.status >= 300) return null;
  try {
    const players = (JSON.parse(answer.body) as { players?: unknown } | null)?.players;
    return typeof players === 'number' && Number.isInteger(players) && players >= 0 ? players : null;
  } catch {
    return null;
  }
}
