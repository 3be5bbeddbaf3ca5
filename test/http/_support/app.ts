/**
 * Test helpers for the HTTP layer: an in-memory InstanceRegistry (the supervisor's interface, made of plain
 * objects that record what the routes asked of them), a logger that keeps its lines, and Basic header builders.
 */
import { connect } from 'node:net';
import type { Hono } from 'hono';
import { type Bus, type BusEvents, createBus } from '../../../src/bus.ts';
import { createApp } from '../../../src/http/app.ts';
import type { LogFields, Logger } from '../../../src/log.ts';
import type {
  ControlAction,
  ControlOptions,
  InstanceControl,
  InstanceRegistry,
} from '../../../src/supervisor/contract.ts';
import type { InstanceStatus } from '../../../src/supervisor/status.ts';

export interface MemoryInstance extends InstanceControl {
  /** `control:<action>` and `checkin`, in call order. */
  calls: string[];
  /** Who asked, for each `control:` call (the `by` the route passed), in call order. */
  requesters: string[];
  token: string | undefined;
  secret: string | undefined;
  state: string;
  dir: string;
}

export function memoryInstance(
  key: string,
  opts: { apiToken?: string; secret?: string; binariesDir?: string; state?: string } = {},
): MemoryInstance {
  const inst: MemoryInstance = {
    key,
    calls: [],
    requesters: [],
    token: opts.apiToken,
    secret: opts.secret,
    state: opts.state ?? 'server.running',
    dir: opts.binariesDir ?? `/nonexistent/instances/${key}/binaries`,
    apiToken: () => inst.token,
    checkinSecret: () => inst.secret,
    control: (action: ControlAction, opts?: ControlOptions) => {
      const extra = [opts?.withData && 'withData', opts?.snapshot && `backup=${opts.snapshot}`].filter(Boolean);
      inst.calls.push(`control:${action}${extra.length > 0 ? `:${extra.join(',')}` : ''}`);
      inst.requesters.push(opts?.by ?? '');
    },
    checkin: () => void inst.calls.push('checkin'),
    currentState: () => inst.state,
    status: (): InstanceStatus => ({
      key,
      name: `Instance ${key}`,
      state: inst.state,
      pid: 4242,
      revision: 'r1',
      lastCheckinAt: '2026-01-01T00:00:00.000Z',
      startedAt: '2026-01-01T00:00:00.000Z',
      uptimeSeconds: 12,
      startupFailures: 0,
      restarts: 1,
      updatePending: false,
      stopRequested: false,
      lastExit: null,
    }),
    binariesDir: () => inst.dir,
  };
  return inst;
}

export function memoryRegistry(...instances: InstanceControl[]): InstanceRegistry {
  const byKey = new Map(instances.map((i) => [i.key, i]));
  return { get: (key) => byKey.get(key), list: () => [...byKey.values()] };
}

export interface RecordingLogger extends Logger {
  /** Every line as `level msg {fields as JSON}`. */
  lines: string[];
}

export function recordingLogger(scope = 'http', lines: string[] = []): RecordingLogger {
  const put = (level: string) => (msg: string, fields?: LogFields) =>
    void lines.push(`${level} [${scope}] ${msg} ${JSON.stringify(fields ?? {})}`);
  return {
    lines,
    debug: put('debug'),
    info: put('info'),
    warn: put('warn'),
    error: put('error'),
    child: (s) => recordingLogger(`${scope}:${s}`, lines),
  };
}

/** Everything a test needs around one app: the app, the bus with recorded events, the log. */
export interface Harness {
  app: Hono;
  bus: Bus;
  log: RecordingLogger;
  controls: BusEvents['instance:control'][];
  rejections: BusEvents['instance:checkin-rejected'][];
  /** Requests refused before their credentials were accepted (rate-limited where they are written). */
  refused: BusEvents['daemon:request-refused'][];
}

export function harness(registry: InstanceRegistry): Harness {
  const bus = createBus();
  const log = recordingLogger();
  const controls: BusEvents['instance:control'][] = [];
  const rejections: BusEvents['instance:checkin-rejected'][] = [];
  bus.on('instance:control', (e) => controls.push(e));
  bus.on('instance:checkin-rejected', (e) => rejections.push(e));
  const refused: BusEvents['daemon:request-refused'][] = [];
  bus.on('daemon:request-refused', (e) => refused.push(e));
  return { app: createApp({ registry, bus, log, version: '9.9.9-test' }), bus, log, controls, rejections, refused };
}

export const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
export const basic = (user: string, password: string): string => `Basic ${b64(`${user}:${password}`)}`;

export interface AuthCase {
  name: string;
  /** The key in the route path. */
  key: string;
  header: string | undefined;
  status: 200 | 400 | 401 | 403 | 404;
}

/**
 * Every case of the Basic-auth decision order (src/http/instance-auth.ts), for a route whose instance `key` exists
 * and accepts `secret`.
 * Families add their own (no ApiToken, no server running, token with ':').
 */
export function authCases(key: string, secret: string): AuthCase[] {
  const right = b64(`${key}:${secret}`);
  return [
    { name: 'no Authorization header → 401', key, header: undefined, status: 401 },
    { name: 'Bearer scheme → 401', key, header: 'Bearer x', status: 401 },
    { name: 'empty header value → 401', key, header: '', status: 401 },
    { name: '"basic" lower-case scheme is accepted', key, header: `basic ${right}`, status: 200 },
    { name: '"BASIC" upper-case scheme is accepted', key, header: `BASIC ${right}`, status: 200 },
    { name: 'bad base64 → 400', key, header: 'Basic !!!not base64!!!', status: 400 },
    { name: 'base64 with trailing garbage → 400', key, header: `Basic ${right}*`, status: 400 },
    {
      name: 'no colon in the decoded text → 400',
      key,
      header: `Basic ${b64(`${key}${secret.replaceAll(':', '')}`)}`,
      status: 400,
    },
    { name: 'Basic without credentials → 400', key, header: 'Basic', status: 400 },
    {
      name: 'invalid UTF-8 credentials → 400',
      key,
      header: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64')}`,
      status: 400,
    },
    { name: 'user ≠ key → 403', key, header: basic(`${key}-other`, secret), status: 403 },
    { name: 'user differs only in case → 403', key, header: basic(key.toUpperCase(), secret), status: 403 },
    { name: 'unknown instance → 404', key: 'ghost', header: basic('ghost', secret), status: 404 },
    { name: 'wrong password → 401', key, header: basic(key, `${secret}x`), status: 401 },
    { name: 'empty password → 401', key, header: basic(key, ''), status: 401 },
    { name: 'password prefix → 401', key, header: basic(key, secret.slice(0, -1)), status: 401 },
    { name: 'right credentials → 200', key, header: right && `Basic ${right}`, status: 200 },
  ];
}

/**
 * `app` as a client on this machine sees it: every `request()` carries the socket @hono/node-server would give one
 * from 127.0.0.1 (without a socket the admin routes take a request for a remote one and refuse it).
 */
export function fromLoopback<A extends Hono>(app: A): A {
  const env = { incoming: { socket: { remoteAddress: '127.0.0.1', remotePort: 40000, remoteFamily: 'IPv4' } } };
  const request: Hono['request'] = (input, init, more, ctx) =>
    app.request(input, init, { ...env, ...(more as object | undefined) }, ctx);
  return Object.assign(Object.create(app) as A, { request });
}

/** Runs `app.request` with an optional Authorization header. */
export function send(
  app: Hono,
  method: string,
  path: string,
  header?: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (header !== undefined) headers.set('authorization', header);
  return Promise.resolve(app.request(path, { ...init, method, headers }));
}

/**
 * Sends `head` (request line and headers, CRLF-separated, without the blank line) over a fresh TCP connection
 * with `Connection: close`, and reads until the server closes. For requests fetch() would normalise or refuse
 * to send (dot-segments, backslashes, odd methods, raw unicode, oversized headers).
 */
export function rawRequest(
  port: number,
  head: string | Buffer,
  timeoutMs = 10_000,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms to ${String(head).slice(0, 80)}`));
    }, timeoutMs);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (m) resolve({ status: Number(m[1]), text });
      else reject(new Error(`no HTTP status line in the answer: ${JSON.stringify(text.slice(0, 200))}`));
    };
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', finish);
    // The server may reset after answering a request it cannot parse; what arrived still counts.
    socket.on('error', () => socket.destroy());
    socket.on('close', finish);
    const tail = Buffer.from('\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n', 'latin1');
    socket.write(Buffer.concat([typeof head === 'string' ? Buffer.from(head, 'utf8') : head, tail]));
  });
}
