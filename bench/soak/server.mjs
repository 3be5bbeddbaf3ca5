#!/usr/bin/env node
/**
 * The soak's game server (node:http only). It speaks the watchdog's launch contract (cvars watchdog.key,
 * watchdog.baseUrl, watchdog.checkin_interval, net.port; the secret in ROBUST_CVAR_watchdog__token) and, at each
 * launch, reads how to misbehave from `<SOAK_DIR>/modes/<key>` (one word; absent = normal):
 *   exit-at-start    exits 3 before listening or checking in (a startup failure)
 *   crash-loop       checks in, then exits 1 after 500 ms
 *   ignore-shutdown  answers /shutdown and /update with 200 and stays up (the daemon must kill it)
 *   slow-start       waits 1.5 s before listening and checking in
 *   fork             starts two children in its process group (they carry `soak-child` in their argv)
 *   old-secret       also checks in with the previous launch's secret (must be refused, changing nothing);
 *                    each answer is appended to <SOAK_DIR>/old-secret-answers as `<key> <status>`
 *   chatty           (one launch) prints SOAK_CHATTY_BPS bytes a second (1 KiB lines) for SOAK_CHATTY_MS, then is quiet
 *   escaping-helper  (one launch: it sets its mode back to normal) once listening, starts a helper in its own
 *                    session that ignores SIGTERM and holds the game port (argv `soak-child`), then exits 1
 *   endless-status   (one launch) answers GET /status with a body that never ends (as fast as the reader takes it)
 * A launch that cannot take its port exits 4, as a game server that cannot bind does.
 * Runs at nice 10 (see below). Leak guard: exits 99 after SOAK_LIFETIME_MS. It never exits because the daemon is gone: with
 * PersistServers a server must outlive a daemon restart.
 */
import { spawn } from 'node:child_process';
import { createHash, timingSafeEqual } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { setPriority } from 'node:os';
import { join } from 'node:path';

// Thirty of these on two cores, relaunched every few seconds, are the soak's load generator, not what it
// measures: at nice 10 they yield the CPU to the daemon, whose event-loop lag is judged, as a benchmark's client
// must not starve the system under test.
setPriority(10);

const cvars = new Map();
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length - 1; i++) {
  if (argv[i] !== '--cvar') continue;
  const kv = argv[++i];
  const eq = kv.indexOf('=');
  if (eq > 0) cvars.set(kv.slice(0, eq), kv.slice(eq + 1));
}
const key = cvars.get('watchdog.key') ?? '';
const base = cvars.get('watchdog.baseUrl');
const token = process.env.ROBUST_CVAR_watchdog__token ?? '';
const port = Number(cvars.get('net.port') ?? 0);
const intervalMs = Number(cvars.get('watchdog.checkin_interval') ?? 15) * 1000;
const dir = process.env.SOAK_DIR ?? '.';
const read = (file) => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
};
const mode = read(join(dir, 'modes', key)) || 'normal';
console.log(`soak server ${key} pid ${process.pid} mode ${mode}`);
// One-shot modes: only this launch escapes (the relaunches that follow are normal servers meeting the held port), or
// chatters (a relaunch after a daemon restart must not flood a log no daemon follows yet).
if (mode === 'escaping-helper' || mode === 'chatty' || mode === 'endless-status')
  writeFileSync(join(dir, 'modes', key), 'normal');
// A log that cannot be written (a full disk, a removed folder) is the daemon's problem to survive, not this one's.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

setTimeout(() => process.exit(99), Number(process.env.SOAK_LIFETIME_MS ?? 900_000)).unref();
// A timer keeps the process alive whatever else it does (an exit is always deliberate).
setInterval(() => {}, 60_000);

if (mode === 'exit-at-start') process.exit(3);

const secretsDir = join(dir, 'secrets');
mkdirSync(secretsDir, { recursive: true });
const oldSecret = read(join(secretsDir, key));
writeFileSync(join(secretsDir, key), token);

if (mode === 'fork') {
  for (let i = 0; i < 2; i++) {
    const code = 'setInterval(() => {}, 60000)';
    // argv after the code: a marker the soak's /proc scan recognises, the run, the key and the parent pid.
    spawn(process.execPath, ['-e', code, 'soak-child', cvars.get('soak.run') ?? '', key, String(process.pid)], {
      stdio: 'ignore',
    });
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 2 });
/** `onStatus` gets the daemon's answer (the soak checks that an old secret is always refused). */
function ping(secret, onStatus = () => {}) {
  if (!key || !base || !secret) return;
  const url = new URL(`server_api/${encodeURIComponent(key)}/ping`, base);
  const headers = {
    Authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`,
    'Content-Length': '0',
  };
  const req = request(url, { method: 'POST', headers, agent }, (res) => {
    onStatus(res.statusCode);
    res.resume();
  });
  req.setTimeout(3000, () => req.destroy());
  req.on('error', () => {});
  req.end();
}

const digest = (s) => createHash('sha256').update(s).digest();
const expected = digest(token);
/** Prints about `SOAK_CHATTY_BPS` bytes a second in 1 KiB lines, for SOAK_CHATTY_MS (bounded). */
function chatter() {
  const line = `${key} chatty ${'x'.repeat(1000)}\n`;
  const perTick = Math.max(1, Math.round(Number(process.env.SOAK_CHATTY_BPS ?? 65536) / 20 / line.length));
  const until = Date.now() + Number(process.env.SOAK_CHATTY_MS ?? 10_000);
  const timer = setInterval(() => {
    if (Date.now() > until) return clearInterval(timer);
    process.stdout.write(line.repeat(perTick));
  }, 50);
}

/** Hands the listening socket to a helper in a session of its own that ignores SIGTERM, then crashes. */
function handOffPort(server) {
  const code = [
    "process.on('SIGTERM', () => {});",
    'let held = null;',
    "process.on('message', (_m, handle) => { held = handle; process.disconnect(); });",
    `setTimeout(() => process.exit(0), ${Number(process.env.SOAK_HELPER_LIFETIME_MS ?? 30_000)});`,
  ].join(' ');
  const helper = spawn(
    process.execPath,
    ['-e', code, 'soak-child', cvars.get('soak.run') ?? '', key, String(process.pid)],
    { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] },
  );
  helper.send('server', server, () => setTimeout(() => process.exit(1), 300));
  helper.unref();
}

/** `{"players": 0, "pad": "000…` and never the end; stops when the reader goes. */
function endless(res) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"players": 0, "pad": "');
  const chunk = Buffer.alloc(64 * 1024, 0x30);
  const more = () => {
    while (!res.destroyed && res.write(chunk));
  };
  res.on('drain', more);
  more();
}

function serve() {
  const server = createServer((req, res) => {
    if (mode === 'endless-status' && req.method === 'GET' && req.url === '/status') return endless(res);
    const given = req.headers.watchdogtoken;
    const ok =
      token !== '' &&
      req.method === 'POST' &&
      (req.url === '/shutdown' || req.url === '/update') &&
      typeof given === 'string' &&
      timingSafeEqual(digest(given), expected);
    res.writeHead(ok ? 200 : 404, { Connection: 'close' });
    const leave = ok && mode !== 'ignore-shutdown';
    res.end(ok ? 'Success' : 'Not Found', () => leave && setImmediate(() => process.exit(0)));
    req.resume();
  })
    .on('error', (err) => {
      console.error(`API port ${port}: ${err.message}`);
      if (err.code === 'EADDRINUSE') process.exit(4);
    })
    .listen(port, '127.0.0.1', () => {
      if (mode === 'escaping-helper') handOffPort(server);
    });
  const stale = () => {
    if (mode === 'old-secret' && oldSecret && oldSecret !== token)
      ping(oldSecret, (status) => appendFileSync(join(dir, 'old-secret-answers'), `${key} ${status}\n`));
  };
  ping(token);
  // At once as well as with every check-in: a launch cut short (a short run, a loaded machine) still tries one.
  stale();
  setInterval(() => {
    ping(token);
    stale();
  }, intervalMs);
  if (mode === 'crash-loop') setTimeout(() => process.exit(1), 500);
}

if (mode === 'chatty') chatter();
if (mode === 'slow-start') setTimeout(serve, 1500);
else serve();
