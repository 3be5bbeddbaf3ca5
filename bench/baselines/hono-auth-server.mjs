#!/usr/bin/env node
/**
 * A second check-in baseline, between the bare server and the daemon: the same route and Basic check as
 * bare-auth-server.mjs, but as a Hono app on @hono/node-server (the daemon's HTTP stack) with nothing behind it.
 * The gap bare → Hono is the framework's cost; Hono → watchdog is the daemon's own. Secret from env BENCH_SECRET.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const expected = createHash('sha256')
  .update(process.env.BENCH_SECRET ?? '', 'utf8')
  .digest();

function authorized(header, key) {
  if (typeof header !== 'string' || !/^basic /i.test(header)) return false;
  const text = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0 || text.slice(0, colon) !== key) return false;
  return timingSafeEqual(
    createHash('sha256')
      .update(text.slice(colon + 1), 'utf8')
      .digest(),
    expected,
  );
}

const api = new Hono();
api.post('/:key/ping', (c) =>
  authorized(c.req.header('authorization'), c.req.param('key')) ? c.body('', 200) : c.body('', 401),
);
const app = new Hono();
app.route('/server_api', api);

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
  console.log(`listening ${info.port}`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
