import { ofetch } from 'ofetch';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';

/**
 * Servers check in at `<BaseUrl>server_api/<key>/ping`. A BaseUrl that does not reach this daemon makes every
 * server restart each TimeoutSeconds (the spec's §7 symptom), so say so at start, naming the cause.
 */
export async function checkBaseUrlReachesUs(baseUrl: string, log: Logger, timeoutMs = 3000): Promise<boolean> {
  const url = new URL('health', baseUrl).href;
  try {
    const res = await ofetch<{ pid?: number }>(url, { timeout: timeoutMs, retry: 0 });
    if (res.pid === process.pid) return true;
    log.warn(`BaseUrl ${baseUrl} answers, but not from this watchdog (pid ${String(res.pid)}): game servers will check in elsewhere, and be restarted every TimeoutSeconds. Fix BaseUrl in appsettings.yml.`);
  } catch (err) {
    log.warn(`BaseUrl ${baseUrl} does not reach this watchdog (${describeError(err)}): game servers will fail to check in and be restarted every TimeoutSeconds. Fix BaseUrl (or Urls) in appsettings.yml.`);
  }
  return false;
}
