import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { serveLoopback } from './webhook.ts';

/**
 * Loopback stand-ins for the chat services the notifier posts to, each strict as the real API is about method,
 * path, headers and body (a request that does not match is answered 400 and recorded in `rejected`), each able to
 * rate-limit the first `limited` requests with the service's own 429 answer and retry hint.
 */
export interface ChatService {
  /** The URL to configure (a topic, a webhook, a homeserver, an API base). */
  url: string;
  /** Accepted requests, parsed. */
  received: Array<{ path: string; headers: IncomingHttpHeaders; body: unknown; text: string }>;
  /** The path of every request, in order, 429s included. */
  paths: string[];
  /** Why requests were refused with 400. */
  rejected: string[];
  /** How many 429 answers were given. */
  limitedCount(): number;
  close(): Promise<void>;
}

interface Spec {
  /** The path suffix configured (`/hooks/T0/B0/secret`); `url` is the server's base joined with it. */
  base: string;
  method: 'POST' | 'PUT';
  /** Null when the request is as the real API wants it, else why not. */
  check(path: string, headers: IncomingHttpHeaders, text: string): string | null;
  /** The 429 answer with the service's own retry hint. */
  limit(res: ServerResponse): void;
  ok(res: ServerResponse, path: string): void;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

async function startService(spec: Spec, limited: number): Promise<ChatService> {
  const received: ChatService['received'] = [];
  const rejected: string[] = [];
  const paths: string[] = [];
  let limits = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '';
      paths.push(path);
      const problem =
        req.method !== spec.method
          ? `method ${req.method}, expected ${spec.method}`
          : spec.check(path, req.headers, text);
      if (problem) {
        rejected.push(problem);
        return json(res, 400, { error: problem });
      }
      if (limits < limited) {
        limits++;
        return spec.limit(res);
      }
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // a text body (ntfy)
      }
      received.push({ path, headers: req.headers, body, text });
      spec.ok(res, path);
    });
  });
  const { url, close } = await serveLoopback(server, spec.base);
  return { url, received, paths, rejected, limitedCount: () => limits, close };
}

const isJson = (h: IncomingHttpHeaders) => /^application\/json\b/.test(h['content-type'] ?? '');
const parse = (text: string): Record<string, unknown> | null => {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** ntfy: `POST /<topic>`, the message as the body; `Authorization: Bearer <token>` when it has one; 429 with Retry-After. */
export function startNtfy(opts: { token?: string; limited?: number; retryAfterS?: number } = {}) {
  return startService(
    {
      base: '/watchdog-alerts',
      method: 'POST',
      check(path, h, text) {
        if (path !== '/watchdog-alerts') return `path ${path}`;
        if (opts.token && h.authorization !== `Bearer ${opts.token}`) return 'no or a wrong bearer token';
        if (!h.title || !/^[1-5]$/.test(String(h.priority)) || !h.tags) return 'Title, Priority and Tags expected';
        if (!/^[\x20-\x7e]*$/.test(String(h.title))) return 'a raw non-ASCII Title header';
        return text.trim() === '' ? 'an empty message' : null;
      },
      limit: (res) => json(res, 429, { code: 42901, http: 429, error: 'limit reached' }, { 'retry-after': '1' }),
      ok: (res) => json(res, 200, { id: 'x1', event: 'message', topic: 'watchdog-alerts' }),
    },
    opts.limited ?? 0,
  );
}

/** A Slack incoming webhook: `POST /services/T/B/<secret>` with `{text, blocks}`; answers `ok` as text; 429 Retry-After. */
export function startSlack(opts: { limited?: number } = {}) {
  return startService(
    {
      base: '/services/T000/B000/slacksecret',
      method: 'POST',
      check(path, h, text) {
        if (path !== '/services/T000/B000/slacksecret') return `path ${path}`;
        const b = parse(text);
        if (!isJson(h) || !b) return 'invalid_payload';
        if (typeof b.text !== 'string' || !Array.isArray(b.blocks)) return 'expected {text, blocks}';
        const ok = b.blocks.every(
          (x: unknown) => typeof x === 'object' && x !== null && Reflect.get(x, 'type') === 'section',
        );
        return ok ? null : 'invalid_blocks';
      },
      limit: (res) => res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('rate_limited'),
      ok: (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
    },
    opts.limited ?? 0,
  );
}

/** A Matrix homeserver: `PUT /_matrix/client/v3/rooms/<room>/send/m.room.message/<txn>`; 429 `M_LIMIT_EXCEEDED`. */
export function startMatrix(opts: { token: string; roomId: string; limited?: number; retryAfterMs?: number }) {
  const prefix = `/_matrix/client/v3/rooms/${encodeURIComponent(opts.roomId)}/send/m.room.message/`;
  const txns = new Map<string, string>();
  return startService(
    {
      base: '',
      method: 'PUT',
      check(path, h, text) {
        if (!path.startsWith(prefix) || !/^[A-Za-z0-9._~-]+$/.test(path.slice(prefix.length))) return `path ${path}`;
        if (h.authorization !== `Bearer ${opts.token}`) return 'M_UNKNOWN_TOKEN';
        const b = parse(text);
        if (!isJson(h) || !b || b.msgtype !== 'm.text' || typeof b.body !== 'string') return 'M_BAD_JSON';
        return null;
      },
      limit: (res) =>
        json(res, 429, {
          errcode: 'M_LIMIT_EXCEEDED',
          error: 'Too many requests',
          retry_after_ms: opts.retryAfterMs ?? 800,
        }),
      ok: (res, path) => {
        // The same transaction id is the same event: a retry is answered with the first event's id.
        const txn = path.slice(prefix.length);
        const id = txns.get(txn) ?? `$ev${txns.size}`;
        txns.set(txn, id);
        json(res, 200, { event_id: id });
      },
    },
    opts.limited ?? 0,
  );
}

/** The Telegram Bot API: `POST /bot<token>/sendMessage` with `{chat_id, text}`; 429 with `parameters.retry_after`. */
export function startTelegram(opts: { token: string; chatId: string; limited?: number }) {
  return startService(
    {
      base: '',
      method: 'POST',
      check(path, h, text) {
        if (path !== `/bot${opts.token}/sendMessage`) return `path ${path}`;
        const b = parse(text);
        if (!isJson(h) || !b) return "Bad Request: can't parse JSON";
        if (String(b.chat_id) !== opts.chatId) return 'Bad Request: chat not found';
        return typeof b.text === 'string' && b.text !== '' ? null : 'Bad Request: message text is empty';
      },
      limit: (res) =>
        json(res, 429, {
          ok: false,
          error_code: 429,
          description: 'Too Many Requests: retry after 1',
          parameters: { retry_after: 1 },
        }),
      ok: (res) => json(res, 200, { ok: true, result: { message_id: 1, chat: { id: 1 }, date: 0, text: '' } }),
    },
    opts.limited ?? 0,
  );
}

/** A receiver of the notice as JSON: `POST /notices`, `{key, kind, title, message, fields, at}`; 429 Retry-After. */
export function startJsonReceiver(opts: { limited?: number } = {}) {
  const keys = ['key', 'kind', 'title', 'message', 'fields', 'at'];
  return startService(
    {
      base: '/notices?token=jsonsecret',
      method: 'POST',
      check(path, h, text) {
        if (path !== '/notices?token=jsonsecret') return `path ${path}`;
        const b = parse(text);
        if (!isJson(h) || !b) return 'not JSON';
        const got = Object.keys(b).sort().join(',');
        return got === [...keys].sort().join(',') && !Number.isNaN(Date.parse(String(b.at))) ? null : `keys ${got}`;
      },
      limit: (res) => json(res, 429, { error: 'slow down' }, { 'retry-after': '1' }),
      ok: (res) => res.writeHead(204).end(),
    },
    opts.limited ?? 0,
  );
}
