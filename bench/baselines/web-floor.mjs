#!/usr/bin/env node
/**
 * A floor for the compiled daemon's idle RSS: a bare node:http server answering GET /health on
 * 127.0.0.1:$BENCH_PORT that has touched the web Request, Response and Headers classes, as @hono/node-server does
 * when it loads (they are Node's bundled undici, loaded on first use). With BENCH_WEB_CLASSES=0 it touches none:
 * the difference is what any Hono app on Node pays for them before its own code.
 */
import { createServer } from 'node:http';

if (process.env.BENCH_WEB_CLASSES !== '0') void [globalThis.Request, globalThis.Response, globalThis.Headers];
createServer((req, res) => {
  res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'application/json' });
  res.end('{"status":"ok"}');
}).listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
