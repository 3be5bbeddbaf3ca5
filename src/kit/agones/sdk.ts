import { type FetchResponse, ofetch } from 'ofetch';
import * as v from 'valibot';
import { monotonicMs } from '../../clock.ts';
import { AnswerTooLargeError, readCapped } from '../capped-body.ts';
import { agonesPortFrom, DEFAULT_AGONES_HTTP_PORT } from './port.ts';
import { DEFAULT_RETRY, type RetryPolicy, retrying } from './retry.ts';
import { type WatchOptions, watchGameServer } from './watch.ts';
import {
  type Counter,
  type CounterUpdate,
  CounterWireSchema,
  counterUpdateBody,
  type GameServer,
  GameServerSchema,
  int64String,
} from './wire.ts';

export { agonesPortFrom, DEFAULT_AGONES_HTTP_PORT };

export interface AgonesSdkOptions {
  /** Default `AGONES_SDK_HTTP_PORT` from `env` (default `process.env`), else 9358. */
  port?: number;
  /** Default 127.0.0.1: `localhost` may resolve to ::1 first. */
  host?: string;
  env?: NodeJS.ProcessEnv;
  /** Every call's; a call may narrow it. */
  retry?: Partial<RetryPolicy>;
}

export interface CallOptions {
  /** Cancels the call and its waits; it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** `NO_RETRY` for a single attempt. */
  retry?: Partial<RetryPolicy>;
}

/** The SDK server answered with an error (`status`), or never within the retry policy (`status` null). */
export class AgonesSdkError extends Error {
  override readonly name = 'AgonesSdkError';
  constructor(
    message: string,
    readonly status: number | null,
    readonly call: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A gateway's while the service behind it is not up yet: worth another attempt. */
const NOT_YET = new Set([502, 503, 504]);

/** A GameServer is a few kB. */
const SDK_ANSWER_CAP_BYTES = 256_000;

/** Its text when not JSON (the schema check names it), undefined when empty. */
function parseJson(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A client of the Agones SDK server's REST API (the sidecar in every game server's pod): each call is retried while
 * the SDK server does not answer yet, within the policy; an error status is final (`AgonesSdkError`).
 *
 * @example
 * const sdk = new AgonesSdk(); // http://127.0.0.1:$AGONES_SDK_HTTP_PORT
 * await sdk.ready();
 * setInterval(() => void sdk.health({ retry: NO_RETRY }).catch(() => {}), 2000);
 */
export class AgonesSdk {
  readonly baseUrl: string;
  readonly policy: RetryPolicy;

  constructor(opts: AgonesSdkOptions = {}) {
    const port = opts.port ?? agonesPortFrom(opts.env ?? process.env) ?? DEFAULT_AGONES_HTTP_PORT;
    const host = opts.host ?? '127.0.0.1';
    this.baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.policy = { ...DEFAULT_RETRY, ...opts.retry };
  }

  async ready(opts?: CallOptions): Promise<void> {
    await this.request('POST', '/ready', {}, opts);
  }

  /** Agones marks the GameServer `Unhealthy` when pings stop for its health window. */
  async health(opts?: CallOptions): Promise<void> {
    await this.request('POST', '/health', {}, opts);
  }

  /** Agones moves the GameServer to `Shutdown` and deletes its pod. */
  async shutdown(opts?: CallOptions): Promise<void> {
    await this.request('POST', '/shutdown', {}, opts);
  }

  /** As a matchmaker's allocation would. */
  async allocate(opts?: CallOptions): Promise<void> {
    await this.request('POST', '/allocate', {}, opts);
  }

  /** Holds the GameServer `Reserved` for `seconds` (0: until something else moves it), out of allocation. */
  async reserve(seconds: number, opts?: CallOptions): Promise<void> {
    await this.request('POST', '/reserve', { seconds: int64String(seconds, 'seconds') }, opts);
  }

  /** Sets the label `agones.dev/sdk-<key>` (Kubernetes label rules apply). */
  async setLabel(key: string, value: string, opts?: CallOptions): Promise<void> {
    await this.request('PUT', '/metadata/label', { key, value }, opts);
  }

  /** Sets the annotation `agones.dev/sdk-<key>`. */
  async setAnnotation(key: string, value: string, opts?: CallOptions): Promise<void> {
    await this.request('PUT', '/metadata/annotation', { key, value }, opts);
  }

  async getGameServer(opts?: CallOptions): Promise<GameServer> {
    return this.parsed('GET', '/gameserver', undefined, GameServerSchema, opts);
  }

  /** `onChange` gets the current GameServer and each change, the stream reopened as needed, until `signal` aborts. */
  watchGameServer(onChange: (gs: GameServer) => void, signal: AbortSignal, opts?: WatchOptions): Promise<void> {
    return watchGameServer(this.baseUrl, onChange, signal, { ...opts, retry: { ...this.policy, ...opts?.retry } });
  }

  /** A Counter (beta `CountsAndLists`) the GameServer spec defines. */
  async getCounter(name: string, opts?: CallOptions): Promise<Counter> {
    return counterOf(await this.parsed('GET', counterPath(name), undefined, CounterWireSchema, opts), name);
  }

  setCounter(name: string, count: number | bigint, opts?: CallOptions): Promise<Counter> {
    return this.updateCounter(name, { count }, opts);
  }

  /** Sets `count` or `capacity`, or moves the count by `countDiff`. */
  async updateCounter(name: string, update: CounterUpdate, opts?: CallOptions): Promise<Counter> {
    const body = counterUpdateBody(update);
    return counterOf(await this.parsed('PATCH', counterPath(name), body, CounterWireSchema, opts), name);
  }

  private async parsed<S extends v.GenericSchema>(
    method: string,
    path: string,
    body: object | undefined,
    schema: S,
    opts?: CallOptions,
  ): Promise<v.InferOutput<S>> {
    const data = await this.request(method, path, body, opts);
    const result = v.safeParse(schema, data);
    if (result.success) return result.output;
    const where = result.issues.map((i) => `${v.getDotPath(i) ?? '(root)'}: ${i.message}`).join('; ');
    const call = `${method} ${path}`;
    throw new AgonesSdkError(`${call}: the Agones SDK server's answer is not understood (${where})`, 200, call);
  }

  private async request(method: string, path: string, body: object | undefined, opts?: CallOptions): Promise<unknown> {
    const policy = { ...this.policy, ...opts?.retry };
    const call = `${method} ${path}`;
    const url = this.baseUrl + path;
    const started = monotonicMs();
    try {
      return await retrying(
        async (signal) => {
          let res: FetchResponse<ReadableStream<Uint8Array>>;
          let value: unknown;
          try {
            res = await ofetch.raw(url, {
              method,
              body,
              retry: 0,
              signal,
              responseType: 'stream',
              ignoreResponseError: true,
            });
            value = parseJson(await readCapped(res._data, SDK_ANSWER_CAP_BYTES, `the answer to ${call} from ${url}`));
          } catch (err) {
            // Past its cap the answer is not the SDK server's: asking again would read the same.
            const tooLarge = err instanceof AnswerTooLargeError;
            // fetch's own message is "fetch failed"; its cause says why (ECONNREFUSED while the SDK server starts).
            const why = err instanceof Error ? (err.cause instanceof Error ? err.cause : err).message : String(err);
            const message = tooLarge ? `${call}: ${why}` : why;
            return { ok: false, retry: !tooLarge, error: new AgonesSdkError(message, null, call, { cause: err }) };
          }
          if (res.ok) return { ok: true, value };
          const data = value as { message?: unknown } | undefined;
          const detail = typeof data?.message === 'string' && data.message ? ` (${data.message})` : '';
          const message = `${call}: the Agones SDK server answered ${res.status}${detail}`;
          return { ok: false, retry: NOT_YET.has(res.status), error: new AgonesSdkError(message, res.status, call) };
        },
        policy,
        opts?.signal,
      );
    } catch (err) {
      if (!(err instanceof AgonesSdkError) || err.status !== null || err.cause instanceof AnswerTooLargeError)
        throw err;
      const seconds = ((monotonicMs() - started) / 1000).toFixed(1);
      throw new AgonesSdkError(
        `${call}: no answer from the Agones SDK server at ${this.baseUrl} within ${seconds} s (${err.message}); ` +
          'is the SDK server running in this pod, and is AGONES_SDK_HTTP_PORT its REST port?',
        null,
        call,
        { cause: err },
      );
    }
  }
}

const counterPath = (name: string) => `/v1beta1/counters/${encodeURIComponent(name)}`;

function counterOf(wire: v.InferOutput<typeof CounterWireSchema>, name: string): Counter {
  return { name: wire.name || name, count: Number(wire.count), capacity: Number(wire.capacity) };
}
