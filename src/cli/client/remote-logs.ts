import { ofetch } from 'ofetch';
import { ClientError } from './errors.ts';
import { type Endpoint, explainFailure, instancePath, request, TIMEOUT_MS } from './http.ts';
import type { Interruption } from './interrupt.ts';

export type RemoteLog = Endpoint & { as: 'token' | 'admin' };

/** The daemon writes at least every 15 s while following; four times that without a byte means the link is dead. */
const SILENCE_MS = 60_000;
const route = (log: RemoteLog, query: string) => instancePath(log, `logs?${query}`);

/** `GET /instances/<key>/logs?lines=N`: the last N lines (an unterminated last line included). */
export async function fetchLogLines(log: RemoteLog, n: number): Promise<{ found: boolean; lines: string[] }> {
  const body = await request<unknown>(route(log, `lines=${n}`), log, 'logs', {
    authorization: log.authorization,
    as: log.as,
  });
  const b = body as { found?: unknown; lines?: unknown };
  if (typeof b !== 'object' || b === null || !Array.isArray(b.lines)) {
    throw new ClientError(
      `the server at ${log.url} answered the log of ${log.key} with something that is not a watchdog log — is --url right?`,
    );
  }
  return { found: b.found !== false, lines: b.lines.map(String) };
}

type LogRecord = { line?: unknown; found?: unknown; end?: unknown; from?: unknown };

/** Reads NDJSON records from a response body as they arrive; returns the resume offset of an `end` record. */
async function readRecords(
  body: ReadableStream<Uint8Array>,
  onRecord: (r: LogRecord) => void,
  onChunk: () => void,
): Promise<number | undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let resume: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return resume;
    onChunk();
    buffered += decoder.decode(value, { stream: true });
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (text.trim() === '') continue;
      const record = JSON.parse(text) as LogRecord;
      if (record.end !== undefined && typeof record.from === 'number') resume = record.from;
      onRecord(record);
    }
  }
}

/**
 * `GET /instances/<key>/logs?follow=1`: the last N lines, then new ones until `stop`. Each stream ends with the offset
 * reached, where the next resumes; one that ends without it means the daemon went away. `opened`: the first stream
 * has started, so a caller's action after it is sure to show its lines.
 */
export async function followRemoteLog(
  log: RemoteLog,
  n: number,
  write: (line: string) => void,
  stop: Interruption,
  note: (m: string) => void,
  opened?: () => void,
): Promise<void> {
  let from: number | undefined;
  for (let first = true; !stop.interrupted; first = false) {
    const abort = new AbortController();
    const onStop = () => abort.abort();
    void stop.signalled.then(onStop);
    const connect = setTimeout(() => abort.abort(new DOMException('no answer', 'TimeoutError')), TIMEOUT_MS);
    let silent = false;
    let silence: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        silent = true;
        abort.abort();
      }, SILENCE_MS);
    };
    try {
      let body: ReadableStream<Uint8Array>;
      try {
        body = await ofetch(route(log, from === undefined ? `lines=${n}&follow=1` : `from=${from}&follow=1`), {
          headers: { authorization: log.authorization },
          retry: 0,
          responseType: 'stream',
          signal: abort.signal,
        });
      } catch (err) {
        if (stop.interrupted) return;
        throw explainFailure(err, log, 'logs', TIMEOUT_MS, log.as);
      } finally {
        clearTimeout(connect);
      }
      heard();
      const resume = await readRecords(
        body,
        (r) => {
          if (typeof r.line === 'string') write(r.line);
          // The first record comes once the daemon has fixed where the stream starts: what follows is new.
          if (first && r.found !== undefined) opened?.();
          if (first && r.found === false) note(`no log yet for ${log.key}; waiting for its server.log to appear`);
        },
        heard,
      ).catch((err: unknown) => {
        if (stop.interrupted) return undefined;
        const why = silent
          ? `went silent for ${SILENCE_MS / 1000} s (is the network down?)`
          : `broke off: ${err instanceof Error ? err.message : String(err)}`;
        throw new ClientError(`the log stream of ${log.key} from ${log.url} ${why}`, 1, { cause: err });
      });
      if (stop.interrupted) return;
      if (resume === undefined)
        throw new ClientError(`the watchdog at ${log.url} ended the log stream of ${log.key} (has it stopped?)`);
      from = resume;
    } finally {
      clearTimeout(silence);
      abort.abort();
    }
  }
}
