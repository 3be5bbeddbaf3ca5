import { setTimeout as delay } from 'node:timers/promises';
import { ofetch } from 'ofetch';
import * as v from 'valibot';
import { AnswerTooLargeError } from '../capped-body.ts';
import { backoffDelay, DEFAULT_RETRY, type RetryPolicy } from './retry.ts';
import { type GameServer, WatchErrorSchema, WatchResultSchema } from './wire.ts';

export interface WatchOptions {
  /** Back-off between reconnects (a watch ends only by its signal). */
  retry?: Partial<RetryPolicy>;
  /** A stream that failed, ended or carried a line not understood. */
  onError?: (error: Error) => void;
}

/** In characters: a GameServer's JSON is a few thousand. */
const WATCH_LINE_CAP = 256_000;

async function readLines(body: ReadableStream<Uint8Array>, onLine: (value: unknown) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl = buffered.indexOf('\n');
    while (nl !== -1) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) onLine(JSON.parse(line));
      nl = buffered.indexOf('\n');
    }
    if (buffered.length > WATCH_LINE_CAP)
      throw new AnswerTooLargeError('a line of GET /watch/gameserver', WATCH_LINE_CAP);
  }
  const rest = buffered.trim();
  if (rest) onLine(JSON.parse(rest));
}

/**
 * `GET /watch/gameserver` kept open, each `{"result": GameServer}` to `onChange` (the current one first); reopened
 * after a back-off that starts over once a stream delivered. Resolves when `signal` aborts; never rejects.
 */
export async function watchGameServer(
  baseUrl: string,
  onChange: (gs: GameServer) => void,
  signal: AbortSignal,
  opts: WatchOptions = {},
): Promise<void> {
  const policy = { ...DEFAULT_RETRY, ...opts.retry };
  const report = (error: Error) => {
    if (!signal.aborted) opts.onError?.(error);
  };
  let failures = 0;
  while (!signal.aborted) {
    // The timeout covers only the answer's head: the stream stays open for good.
    const attempt = new AbortController();
    const stop = () => attempt.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    const headTimer = setTimeout(() => attempt.abort(new Error('no answer')), policy.timeoutMs);
    let delivered = false;
    try {
      const body = await ofetch(`${baseUrl}/watch/gameserver`, {
        retry: 0,
        responseType: 'stream',
        signal: attempt.signal,
      });
      clearTimeout(headTimer);
      await readLines(body, (value) => {
        const change = v.safeParse(WatchResultSchema, value);
        const failure = v.safeParse(WatchErrorSchema, value);
        if (change.success) {
          delivered = true;
          onChange(change.output.result);
        } else if (failure.success) {
          report(new Error(`GET /watch/gameserver reported an error: ${failure.output.error.message ?? 'no message'}`));
        } else {
          report(new Error('GET /watch/gameserver sent a line that is not {"result": GameServer}'));
        }
      });
      report(new Error('GET /watch/gameserver: the SDK server ended the stream'));
    } catch (err) {
      report(
        new Error(`GET /watch/gameserver failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err }),
      );
    } finally {
      clearTimeout(headTimer);
      signal.removeEventListener('abort', stop);
      attempt.abort();
    }
    failures = delivered ? 1 : failures + 1;
    await delay(backoffDelay(policy, failures), undefined, { signal }).catch(() => undefined);
  }
}
