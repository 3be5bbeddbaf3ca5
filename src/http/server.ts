import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import type { FastPath } from './checkin-fast-path.ts';

export interface HttpServer {
  /** `http://host:port`, no trailing slash. */
  url: string;
  port: number;
  /** Stops accepting, drops idle keep-alive connections, then every connection after a short grace. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Default 127.0.0.1: the control API is not meant for the open network unless configured so. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** How long in-flight requests may finish before their connections are cut; default 250 ms. */
  graceMs?: number;
  /** Tried before the app on every request (checkin-fast-path.ts); the app answers whatever it leaves. */
  fastPath?: FastPath;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Listens on node:http with @hono/node-server's adapter (after `fastPath`, if given); rejects with an actionable message when the address cannot be bound. */
export function startHttpServer(app: Hono, opts: ListenOptions): Promise<HttpServer> {
  const host = opts.host ?? '127.0.0.1';
  const graceMs = opts.graceMs ?? 250;
  return new Promise((resolve, reject) => {
    const toApp = getRequestListener(app.fetch, { hostname: host });
    const fast = opts.fastPath;
    const server = createServer(fast ? (req, res) => void (fast(req, res) || toApp(req, res)) : toApp);
    const onError = (err: Error) =>
      reject(new Error(`cannot listen on ${host}:${opts.port}: ${err.message} (is another watchdog running? change Urls)`, { cause: err }));
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : opts.port;
      let closing: Promise<void> | null = null;
      // STYLE.md §3: close() alone waits on keep-alive and streaming clients for seconds; cut them after a grace.
      const close = () =>
        (closing ??= new Promise<void>((done) => {
          const cut = setTimeout(() => server.closeAllConnections(), graceMs);
          server.close(() => {
            clearTimeout(cut);
            done();
          });
          server.closeIdleConnections();
        }));
      resolve({ url: `http://${urlHost(host)}:${port}`, port, close });
    });
    server.listen(opts.port, host);
  });
}
