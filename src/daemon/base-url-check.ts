import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { type AnswerCap, type AnswersSettings, answerCap } from '../config/sections/answers.ts';
import { describeError } from '../errors.ts';
import { readCapped } from '../kit/capped-body.ts';
import type { Logger } from '../log.ts';

/** GET `url` and parse its JSON, on node:http(s): fetch would load undici, several MB the idle daemon never needs. */
function getJson(url: string, { timeoutMs, maxBytes, setting }: AnswerCap): Promise<unknown> {
  const get = url.startsWith('https:') ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const fail = (err: Error) =>
      reject(err.name === 'AbortError' ? new Error(`no answer within ${timeoutMs} ms`, { cause: err }) : err);
    // The whole exchange, body included, within timeoutMs (the `timeout` option only bounds a silence).
    const req = get(url, { signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      readCapped(res, maxBytes, 'the answer', setting).then((body) => {
        if ((res.statusCode ?? 0) >= 400) return reject(new Error(`HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(body.toString('utf8')));
        } catch (err) {
          reject(new Error('the answer is not JSON', { cause: err }));
        }
      }, fail);
    });
    req.on('error', fail);
  });
}

/** A wrong `BaseUrl` breaks only client downloads (servers never use it): said at start, as advice. */
export async function checkBaseUrlReachesUs(baseUrl: string, log: Logger, answers: AnswersSettings): Promise<boolean> {
  const url = new URL('health', baseUrl).href;
  try {
    const res = ((await getJson(url, answerCap(answers, 'BaseUrl'))) ?? {}) as { pid?: unknown };
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
