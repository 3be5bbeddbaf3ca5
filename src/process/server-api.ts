import { request } from 'node:http';

/**
 * The watchdog's side of the game server's API: `POST /update` and `POST /shutdown`, as the real watchdog's
 * `ServerInstance.cs` sends them.
 *
 * The real watchdog calls `http://localhost:<ApiPort>`. We call 127.0.0.1 first and fall back to [::1]
 * only when that is refused: Node resolves `localhost` in the resolver's order, which is often ::1
 * first, and the engine's status host and our kit listen on IPv4 by default. A fresh connection per
 * request (no keep-alive agent) so nothing lingers after the server exits.
 */
const HOSTS = ['127.0.0.1', '::1'] as const;

interface Answer {
  status: number;
}

function post(
  host: string,
  port: number,
  path: string,
  headers: Record<string, string>,
  body: string | null,
  signal: AbortSignal,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port,
        path,
        method: 'POST',
        headers: { ...headers, ...(body === null ? { 'Content-Length': '0' } : {}) },
        agent: false,
        signal,
      },
      (res) => {
        res.resume(); // the body is not needed; drain it so the socket closes
        res.once('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.once('error', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.once('error', reject);
    req.end(body ?? undefined);
  });
}

async function send(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: string | null,
  timeoutMs: number,
): Promise<Answer | null> {
  const signal = AbortSignal.timeout(timeoutMs);
  for (const host of HOSTS) {
    try {
      return await post(host, port, path, headers, body, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ECONNREFUSED' && code !== 'EADDRNOTAVAIL' && code !== 'EAFNOSUPPORT') return null;
    }
  }
  return null;
}

/**
 * Asks the server to shut down: `POST /shutdown` with `WatchdogToken` and `{"Reason": reason}`.
 * True when any HTTP answer came back (the real watchdog does not check the status either), false on
 * a transport error or when `timeoutMs` passed.
 */
export async function requestShutdown(
  apiPort: number,
  secret: string,
  reason: string,
  timeoutMs: number,
): Promise<boolean> {
  const body = JSON.stringify({ Reason: reason });
  const answer = await send(
    apiPort,
    '/shutdown',
    { WatchdogToken: secret, 'Content-Type': 'application/json' },
    body,
    timeoutMs,
  );
  return answer !== null;
}

/**
 * Tells the server an update is available: `POST /update` with `WatchdogToken` and no body (the game
 * sees reason UpdateAvailable and restarts at a convenient moment). True only on a 2xx answer.
 */
export async function requestUpdate(apiPort: number, secret: string, timeoutMs: number): Promise<boolean> {
  const answer = await send(apiPort, '/update', { WatchdogToken: secret }, null, timeoutMs);
  return answer !== null && answer.status >= 200 && answer.status < 300;
}
