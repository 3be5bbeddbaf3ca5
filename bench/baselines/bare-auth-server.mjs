#!/usr/bin/env node
/**
 * The baseline for check-in throughput: a bare node:http server answering POST /server_api/<key>/ping with the same
 * HTTP Basic check as the daemon (user = key, password compared in constant time on SHA-256 digests), nothing
 * else. Secret from env BENCH_SECRET (never argv), port 0 on 127.0.0.1; prints `listening <port>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.BENCH_SECRET ?? '';
const expected = createHash('sha256').update(secret, 'utf8').digest();
const PREFIX = '/server_api/';
const SUFFIX = '/ping';

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

const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (req.method === 'POST' && url.startsWith(PREFIX) && url.endsWith(SUFFIX)) {
    const key = decodeURIComponent(url.slice(PREFIX.length, -SUFFIX.length));
    if (authorized(req.headers.authorization, key)) {
      res.writeHead(200);
      res.end();
    } else {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="watchdog"' });
      res.end();
    }
  } else {
    res.writeHead(404);
    res.end();
  }
  req.resume();
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
