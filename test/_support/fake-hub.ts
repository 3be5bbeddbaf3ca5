import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sendEndless } from './endless.ts';

/**
 * A strict stand-in for SS14.ServerHub (space-wizards/SS14.Web, `ServerListController`), on loopback:
 * - `POST /api/servers/advertise` with JSON `{"Address": "ss14://…"}`: 400 with the real message unless the address is
 *   an absolute ss14:// or ss14s:// URI with a host; then it fetches the server's `/status` (ss14 → http, default port
 *   1212) and `/info?can_skip_build=1`, 422 "Unable to contact status address, …" when it cannot, 422 when the status
 *   has no name; else the advertisement is kept until `expireMs` from now, and 204.
 * - `GET /api/servers`: `[{address, statusData, inferredTags}]` of the advertisements not expired.
 * - `GET /api/servers/info?url=<address>`: that server's /info while listed, 404 otherwise.
 * Tests drop a server (`drop`) to stand for an expired advertisement, and `list` one to stand for an accepted one.
 */
export interface FakeHub {
  /** With its trailing slash, as `hub.hub_urls` entries are written. */
  url: string;
  listed(): string[];
  drop(address: string): void;
  /**
   * Lists `address` as an accepted advertisement would (for a server that cannot answer the hub's checks), with
   * `info` as its /info (what `GET /api/servers/info` answers).
   */
  list(address: string, name?: string, info?: unknown): void;
  requests: Array<{ method: string; path: string }>;
  /** From now on `GET /api/servers/info` answers 200 and then bytes without end (a hostile or broken hub). */
  answerEndless(): void;
  /** The bytes each endless answer had sent when its reader hung up, in order. */
  cutOff: number[];
  close(): Promise<void>;
}

interface Advert {
  status: unknown;
  info: unknown;
  expires: number;
}

function apiAddress(address: string): URL | null {
  let uri: URL;
  try {
    uri = new URL(address);
  } catch {
    return null;
  }
  if ((uri.protocol !== 'ss14:' && uri.protocol !== 'ss14s:') || uri.hostname.trim() === '') return null;
  const api = new URL(`${uri.protocol === 'ss14:' ? 'http' : 'https'}://${uri.host}${uri.pathname || '/'}`);
  if (uri.protocol === 'ss14:' && uri.port === '') api.port = '1212';
  if (!api.pathname.endsWith('/')) api.pathname += '/';
  return api;
}

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

async function fetchJson(url: URL): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return JSON.parse(await res.text());
}

export async function startFakeHub(opts: { expireMs?: number } = {}): Promise<FakeHub> {
  const adverts = new Map<string, Advert>();
  const requests: FakeHub['requests'] = [];
  const cutOff: number[] = [];
  let endless = false;
  const live = () => [...adverts].filter(([, a]) => a.expires > Date.now());
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    requests.push({ method: req.method ?? '', path: url.pathname });
    const send = (status: number, payload?: unknown, type = 'application/json') => {
      res.writeHead(status, payload === undefined ? {} : { 'Content-Type': type });
      res.end(payload === undefined ? undefined : typeof payload === 'string' ? payload : JSON.stringify(payload));
    };
    if (req.method === 'GET' && url.pathname === '/api/servers')
      return send(
        200,
        live().map(([address, a]) => ({ address, statusData: a.status, inferredTags: [] })),
      );
    if (req.method === 'GET' && url.pathname === '/api/servers/info') {
      if (endless) return void sendEndless(res, Buffer.from('{"name": "')).then((n) => cutOff.push(n));
      const found = live().find(([address]) => address === url.searchParams.get('url'));
      return found ? send(200, found[1].info) : send(404);
    }
    if (req.method === 'POST' && url.pathname === '/api/servers/advertise') {
      let address: unknown;
      try {
        address = (JSON.parse(await body(req)) as { Address?: unknown }).Address;
      } catch {
        return send(400, { title: 'One or more validation errors occurred.', status: 400 });
      }
      const api = typeof address === 'string' ? apiAddress(address) : null;
      if (typeof address !== 'string' || api === null)
        return send(
          400,
          'Invalid SS14 URI. Ensure your hub.server_url starts with ss14:// or ss14s:// and that the address is valid.',
          'text/plain; charset=utf-8',
        );
      let status: unknown;
      let info: unknown;
      try {
        status = await fetchJson(new URL('status', api));
        info = await fetchJson(new URL('info?can_skip_build=1', api));
      } catch {
        return send(
          422,
          'Unable to contact status address, ensure your firewall/port forwarding configuration allows traffic from the internet and double check your config.',
          'text/plain; charset=utf-8',
        );
      }
      const name = (status as { name?: unknown } | null)?.name;
      if (typeof name !== 'string' || name.trim() === '')
        return send(422, 'Server name cannot be empty', 'text/plain; charset=utf-8');
      adverts.set(address, { status, info, expires: Date.now() + (opts.expireMs ?? 180_000) });
      return send(204);
    }
    send(404);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    listed: () => live().map(([a]) => a),
    drop: (address) => adverts.delete(address),
    list: (address, name = 'listed by the test', info = {}) =>
      adverts.set(address, { status: { name }, info, expires: Date.now() + (opts.expireMs ?? 180_000) }),
    requests,
    answerEndless: () => {
      endless = true;
    },
    cutOff,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `<instanceDir>/config.toml` so that its server advertises itself as `address` to `hubUrl` alone. */
export async function advertiseTo(instanceDir: string, address: string, hubUrl: string): Promise<void> {
  await mkdir(instanceDir, { recursive: true });
  await writeFile(
    join(instanceDir, 'config.toml'),
    `[hub]\nadvertise = true\nserver_url = "${address}"\nhub_urls = "${hubUrl}"\n`,
  );
}
