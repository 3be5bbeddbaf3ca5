import { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

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
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Listens with @hono/node-server; rejects with an actionable message when the address cannot be bound. */
export function startHttpServer(app: Hono, opts: ListenOptions): Promise<HttpServer> {
  const host = opts.host ?? '127.0.0.1';
  const graceMs = opts.graceMs ?? 250;
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port: opts.port });
    if (!(server instanceof Server)) {
      reject(new Error('@hono/node-server returned a non-HTTP/1 server; expected node:http Server'));
      return;
    }
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
  });
}
