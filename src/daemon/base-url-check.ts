import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';

/**
 * `BaseUrl` is the public address clients are given (the client download of Local and non-hybrid Git builds).
 * Game servers never use it (they check in where the daemon listens), so a wrong one breaks only those
 * downloads: say so at start, as advice, naming the cause.
 */
export async function checkBaseUrlReachesUs(baseUrl: string, log: Logger, timeoutMs = 3000): Promise<boolean> {
  const url = new URL('health', baseUrl).href;
  try {
    // Loaded here, after the daemon listens: the HTTP client is not needed to start (bench/footprint.ts).
    const { ofetch } = await import('ofetch');
    const res = await ofetch<{ pid?: number }>(url, { timeout: timeoutMs, retry: 0 });
    if (res.pid === process.pid) return true;
    log.warn(
      `BaseUrl ${baseUrl} answers, but not from this watchdog (pid ${String(res.pid)}): clients given it (client downloads of Local and Git builds) reach another server. Game servers are not affected. Fix BaseUrl in appsettings.yml if clients should reach this watchdog there.`,
    );
  } catch (err) {
    log.warn(
      `BaseUrl ${baseUrl} does not reach this watchdog from here (${describeError(err)}): clients given it (client downloads of Local and Git builds) may fail. Game servers are not affected. Fine behind a proxy this host cannot reach; otherwise fix BaseUrl in appsettings.yml.`,
    );
  }
  return false;
}
