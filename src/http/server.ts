import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import type { ListenAddress } from '../config/listen.ts';
import type { ConnectionGuard, ConnectionLimits } from './connection-guard.ts';

/** `url`: `http://host:port`, no trailing slash. */
export type HttpServer = { url: string; port: number; close(): Promise<void> };

/**
 * `host`: 127.0.0.1 unless given, the control API not being meant for the open network; `guard`: the connection caps
 * every socket of the daemon shares; `timeouts`: Node's defaults when absent; `onError`: an error of the socket once
 * it listens (`accept` failing with EMFILE), which would otherwise escape as uncaught.
 */
type ListenOptions = {
  host?: string;
  port: number;
  guard?: ConnectionGuard;
  timeouts?: Pick<ConnectionLimits, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'>;
  onError?: (err: Error) => void;
};

/** Listens on node:http with @hono/node-server's adapter. */
export function startHttpServer(app: Hono, opts: ListenOptions): Promise<HttpServer> {
  const host = opts.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const t = opts.timeouts;
    // A connection whose request headers have not all arrived in time (one that sends nothing, or a byte every few
    // seconds) gets 408 and is closed; Node looks for them every `connectionsCheckingInterval`.
    const options = t && {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      keepAliveTimeout: t.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(30_000, Math.floor(Math.min(t.headersTimeoutMs, t.requestTimeoutMs) / 4)),
      ),
    };
    const server = createServer(options ?? {}, getRequestListener(app.fetch, { hostname: host }));
    if (t) server.keepAliveTimeout = t.keepAliveTimeoutMs;
    opts.guard?.attach(server);
    const onError = (err: Error) =>
      reject(
        new Error(`cannot listen on ${host}:${opts.port}: ${err.message} (is another watchdog running? change Urls)`, {
          cause: err,
        }),
      );
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      server.on('error', (err) => opts.onError?.(err));
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : opts.port;
      let closing: Promise<void> | null = null;
      // close() alone waits on keep-alive and streaming clients for seconds: idle ones go now, the rest after 250 ms.
      const close = () =>
        (closing ??= new Promise<void>((done) => {
          const cut = setTimeout(() => server.closeAllConnections(), 250);
          server.close(() => {
            clearTimeout(cut);
            done();
          });
          server.closeIdleConnections();
        }));
      resolve({ url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port, close });
    });
    server.listen(opts.port, host);
  });
}

export type HttpServers = Awaited<ReturnType<typeof startHttpServers>>;

/** One socket the daemon listens on; `name` is the `Urls` host it came from (`localhost` gives two). */
export type BoundAddress = { name: string; host: string; port: number; url: string };

/** Errors that mean "this host has no IPv6", not "something else holds the port". */
const NO_IPV6 = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT']);

/**
 * Listens on every address of `Urls`, in order. `localhost` binds 127.0.0.1 and then ::1 on the same port (skipped
 * where the host has no IPv6), as Kestrel does. If one address cannot be bound, those already bound are closed.
 */
export async function startHttpServers(
  app: Hono,
  addresses: readonly ListenAddress[],
  opts: Omit<ListenOptions, 'host' | 'port'> = {},
): Promise<{ bound: BoundAddress[]; close(): Promise<void> }> {
  const servers: Array<{ server: HttpServer; address: BoundAddress }> = [];
  const closeAll = () => Promise.all(servers.map((s) => s.server.close())).then(() => undefined);
  /** The port bound, or null when an optional address was skipped for want of IPv6. */
  const bind = async (name: string, host: string, port: number, optional = false): Promise<number | null> => {
    try {
      const server = await startHttpServer(app, { ...opts, host, port });
      servers.push({ server, address: { name, host, port: server.port, url: server.url } });
      return server.port;
    } catch (err) {
      const code =
        err instanceof Error && err.cause instanceof Error && 'code' in err.cause ? String(err.cause.code) : '';
      if (optional && NO_IPV6.has(code)) return null;
      throw err;
    }
  };
  try {
    for (const a of addresses) {
      if (a.host === 'localhost') {
        const port = await bind('localhost', '127.0.0.1', a.port);
        await bind('localhost', '::1', port ?? a.port, true);
      } else if (a.host === '*') {
        // `::` takes IPv4 as well (dual-stack); a host without IPv6 gets every IPv4 interface instead.
        if ((await bind('*', '::', a.port, true)) === null) await bind('*', '0.0.0.0', a.port);
      } else await bind(a.host, a.host, a.port);
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  return { bound: servers.map((s) => s.address), close: closeAll };
}
