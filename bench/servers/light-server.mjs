#!/usr/bin/env node
/**
 * A light bench game server: node:http and node:crypto only, no tsx. It checks in (POST <baseUrl>/server_api/<key>/ping,
 * Basic key:token, one keep-alive connection) at once and every watchdog.checkin_interval seconds, and answers
 * POST /shutdown and POST /update on net.port (WatchdogToken checked in constant time) by exiting 0.
 * Leak guards: exits 98 after three check-ins in a row find the watchdog gone (connection refused), and 99 after
 * LIGHT_LIFETIME_MS (default 15 min).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';

const cvars = new Map();
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length - 1; i++) {
  if (argv[i] !== '--cvar') continue;
  const kv = argv[++i];
  const eq = kv.indexOf('=');
  if (eq > 0) cvars.set(kv.slice(0, eq), kv.slice(eq + 1));
}
const key = cvars.get('watchdog.key');
const base = cvars.get('watchdog.baseUrl');
const token = process.env.ROBUST_CVAR_watchdog__token ?? '';
const port = Number(cvars.get('net.port') ?? 0);
const intervalMs = Number(cvars.get('watchdog.checkin_interval') ?? 15) * 1000;

setTimeout(() => process.exit(99), Number(process.env.LIGHT_LIFETIME_MS ?? 900_000));

if (key && base && token) {
  const url = new URL(`server_api/${encodeURIComponent(key)}/ping`, base);
  const headers = {
    Authorization: `Basic ${Buffer.from(`${key}:${token}`).toString('base64')}`,
    'Content-Length': '0',
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let refused = 0;
  const ping = () => {
    const req = request(url, { method: 'POST', headers, agent }, (res) => {
      refused = 0;
      res.resume();
    });
    req.on('error', (err) => {
      if (err.code === 'ECONNREFUSED' && ++refused >= 3) process.exit(98);
    });
    req.end();
  };
  ping();
  setInterval(ping, intervalMs);
}

const digest = (s) => createHash('sha256').update(s).digest();
const expected = digest(token);
createServer((req, res) => {
  const given = req.headers.watchdogtoken;
  const ok =
    token !== '' &&
    req.method === 'POST' &&
    (req.url === '/shutdown' || req.url === '/update') &&
    typeof given === 'string' &&
    timingSafeEqual(digest(given), expected);
  res.writeHead(ok ? 200 : 404, { Connection: 'close' });
  res.end(ok ? 'Success' : 'Not Found', () => ok && setImmediate(() => process.exit(0)));
  req.resume();
})
  // A taken port leaves the server without its API (the supervisor then kills it on shutdown), not in a crash loop.
  .on('error', (err) => console.error(`API port ${port}: ${err.message}`))
  .listen(port, '127.0.0.1');
