#!/usr/bin/env node
import { createHash, timingSafeEqual } from 'node:crypto';
/**
 * Bench server for the crash → relaunch gap. It stamps its own wall time (performance.timeOrigin + now, the same
 * clock in every process) so every supervisor is measured the same way, by the process it relaunches:
 *   start <pid> <ms>   as soon as the module runs
 *   ready <pid> <ms>   up (under a watchdog: after its first check-in was answered 200)
 *   exit <pid> <ms>    just before process.exit(1) on SIGUSR2 (the bench's "crash now"), and just before
 *                      process.exit(0) after answering the watchdog's POST /shutdown or /update (the moment players
 *                      lose the server in a restart or an update; bench/downtime.ts measures from it)
 * appended to the file named by env CRASH_LOG. Under the watchdog (watchdog.* cvars and the token env) it checks in
 * every watchdog.checkin_interval seconds and answers POST /shutdown and /update on net.port (exit 0). Without a
 * watchdog (the spawn-loop floor, PM2) it is ready at once. It exits 99 after CRASH_LIFETIME_MS (leak guard).
 * Self-contained on purpose: the bench copies it beside a node shebang (see bench/lib/launcher.ts).
 */
import { appendFileSync } from 'node:fs';
import { createServer, request } from 'node:http';

const now = () => performance.timeOrigin + performance.now();
const logFile = process.env.CRASH_LOG;
const mark = (what, at = now()) => {
  if (logFile) appendFileSync(logFile, `${what} ${process.pid} ${at.toFixed(3)}\n`);
};
mark('start');

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
const token = process.env.ROBUST_CVAR_watchdog__token;
const port = Number(cvars.get('net.port') ?? 0);

process.on('SIGUSR2', () => {
  mark('exit');
  process.exit(1);
});
setTimeout(() => process.exit(99), Number(process.env.CRASH_LIFETIME_MS ?? 120_000));

if (key && base && token) {
  const url = new URL(`server_api/${encodeURIComponent(key)}/ping`, base);
  const auth = `Basic ${Buffer.from(`${key}:${token}`).toString('base64')}`;
  let readyMarked = false;
  const ping = () => {
    const req = request(url, { method: 'POST', headers: { Authorization: auth, 'Content-Length': '0' } }, (res) => {
      res.resume();
      if (res.statusCode === 200 && !readyMarked) {
        readyMarked = true;
        mark('ready');
      }
    });
    req.on('error', () => {});
    req.end();
  };
  ping();
  setInterval(ping, Number(cvars.get('watchdog.checkin_interval') ?? 15) * 1000).unref();

  const digest = (s) => createHash('sha256').update(s).digest();
  createServer((req, res) => {
    const given = req.headers.watchdogtoken;
    const ok =
      req.method === 'POST' &&
      (req.url === '/shutdown' || req.url === '/update') &&
      typeof given === 'string' &&
      timingSafeEqual(digest(given), digest(token));
    res.writeHead(ok ? 200 : 404, { Connection: 'close' });
    res.end(
      ok ? 'Success' : 'Not Found',
      () =>
        ok &&
        setImmediate(() => {
          mark('exit');
          process.exit(0);
        }),
    );
    req.resume();
  })
    .on('error', (err) => console.error(`API port ${port}: ${err.message}`))
    .listen(port, '127.0.0.1')
    .unref();
} else {
  mark('ready');
}
