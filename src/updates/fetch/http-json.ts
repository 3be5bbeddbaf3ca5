import { rootCause, UpdateError } from '../../errors.ts';
import { AnswerTooLargeError, readCapped } from '../../kit/capped-body.ts';
import { describeUrl, get } from './download.ts';

/** GETs a JSON document of at most `maxBytes`; any failure is an UpdateError naming `what` ("manifest") and where. */
export async function fetchJson(
  url: string,
  opts: { what: string; headers?: Record<string, string>; timeoutMs: number; maxBytes: number; signal: AbortSignal },
): Promise<unknown> {
  const where = `${opts.what} at ${describeUrl(url)}`;
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  let text: string;
  try {
    const res = await get(
      url,
      { accept: 'application/json', ...opts.headers },
      AbortSignal.any([opts.signal, timeout]),
    );
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new UpdateError(`the ${where} answered HTTP ${res.status} ${res.statusText}`.trim());
    }
    text = (await readCapped(res.body, opts.maxBytes, `the ${where}`)).toString('utf8');
  } catch (err) {
    if (err instanceof UpdateError) throw err;
    if (err instanceof AnswerTooLargeError) {
      throw new UpdateError(`${err.message}; raise Updates.MaxManifestMegabytes if it really is that large`, {
        cause: err,
      });
    }
    if (opts.signal.aborted) throw new UpdateError(`fetching the ${where} was cancelled`, { cause: err });
    if (timeout.aborted)
      throw new UpdateError(`the ${where} did not answer within ${opts.timeoutMs / 1000} s`, { cause: err });
    const why = rootCause(err) || (err instanceof Error ? err.message : '');
    throw new UpdateError(`cannot fetch the ${where}${why ? `: ${why}` : ''}`, { cause: err });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const start = JSON.stringify(text.slice(0, 40));
    throw new UpdateError(`the ${where} is not JSON (it starts with ${start}); check the URL`, { cause: err });
  }
}
