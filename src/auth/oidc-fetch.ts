import type { AnswerCap } from '../config/sections/answers.ts';
import { readCapped } from '../kit/capped-body.ts';

/** What openid-client hands its fetch (its `customFetch`): the URL and the request's options. */
export interface ProviderRequest {
  body?: unknown;
  headers: Record<string, string>;
  method: string;
  redirect: 'manual';
  signal?: AbortSignal;
}

/** A provider's answer that did not come within the time cap. */
export class ProviderTimeoutError extends Error {
  override name = 'ProviderTimeoutError';
}

/**
 * A fetch for openid-client that gives every request to the provider a time cap (covering the body) and reads the
 * body whole under a size cap before openid-client sees it, so a provider that answers slowly or without end costs
 * a login attempt, never the daemon's memory. `capOf` (`Answers.Oidc…`) is read at each request.
 */
export function cappedProviderFetch(capOf: () => AnswerCap): (url: string, init: ProviderRequest) => Promise<Response> {
  return async (url, init) => {
    const { timeoutMs, maxBytes, setting } = capOf();
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const where = `the provider's answer from ${new URL(url).origin}${new URL(url).pathname}`;
    try {
      const res = await fetch(url, { ...init, body: init.body as RequestInit['body'], signal });
      const body = await readCapped(res.body, maxBytes, where, setting);
      // A null-body status (204, 304) takes no body, not even an empty one.
      const empty = body.length === 0 && [101, 204, 205, 304].includes(res.status);
      return new Response(empty ? null : body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    } catch (err) {
      if (timeout.aborted)
        throw new ProviderTimeoutError(`${where} did not come within ${timeoutMs / 1000} s`, { cause: err });
      throw err;
    }
  };
}
