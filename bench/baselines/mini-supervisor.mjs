#!/usr/bin/env node
/**
 * The floor for the scale benchmark: the least a supervisor of N check-in servers can do, in one plain Node file.
 * For each instance it spawns the server (own process group, stdout/stderr piped and drained, a fresh random secret
 * in ROBUST_CVAR_watchdog__token, the watchdog's --cvar arguments), takes POST /server_api/<key>/ping with a
 * constant-time Basic check, re-arms a per-instance hang timer on each check-in, SIGKILLs the group when it fires,
 * and relaunches on every exit. GET /health answers { instances: { key: state } }, GET /pids { key: pid }.
 * Usage: mini-supervisor.mjs <config.json> with { script, checkinSeconds, timeoutSeconds, instances: [{ key, port }] };
 * prints `listening on http://127.0.0.1:<port>`, and `hang <key> <pid>` for each kill. SIGHUP re-reads timeoutSeconds
 * (prints `reloaded`; a timer takes the new value when next armed). SIGTERM kills every group.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
process.on('SIGHUP', () => {
  config.timeoutSeconds = JSON.parse(readFileSync(process.argv[2], 'utf8')).timeoutSeconds;
  console.log('reloaded');
});
const digest = (s) => createHash('sha256').update(s, 'utf8').digest();
const instances = new Map();
let baseUrl = '';
let stopping = false;

/** A leak guard: an instance that keeps dying is not relaunched for ever. */
const MAX_LAUNCHES = 50;

function launch(inst) {
  if (stopping) return;
  inst.launches = (inst.launches ?? 0) + 1;
  if (inst.launches > MAX_LAUNCHES) return;
  inst.secret = randomBytes(64).toString('base64');
  inst.digest = digest(inst.secret);
  inst.state = 'starting';
  const args = [
    '--cvar',
    `watchdog.key=${inst.key}`,
    '--cvar',
    `watchdog.baseUrl=${baseUrl}`,
    '--cvar',
    `net.port=${inst.port}`,
    '--cvar',
    `watchdog.checkin_interval=${config.checkinSeconds}`,
  ];
  const child = spawn(config.script, args, {
    env: { ...process.env, ROBUST_CVAR_watchdog__token: inst.secret },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  inst.child = child;
  child.stdout.resume();
  child.stderr.resume();
  armHangTimer(inst);
  child.once('exit', () => {
    clearTimeout(inst.timer);
    if (inst.child === child) launch(inst);
  });
}

function armHangTimer(inst) {
  clearTimeout(inst.timer);
  inst.timer = setTimeout(() => {
    const pid = inst.child?.pid;
    console.log(`hang ${inst.key} ${pid}`);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }, config.timeoutSeconds * 1000);
}

function checkin(req) {
  const m = /^\/server_api\/([^/]+)\/ping$/.exec(req.url ?? '');
  if (!m || req.method !== 'POST') return 404;
  const inst = instances.get(decodeURIComponent(m[1]));
  const header = req.headers.authorization;
  if (!inst || typeof header !== 'string' || !/^basic /i.test(header)) return 401;
  const text = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0 || text.slice(0, colon) !== inst.key || !timingSafeEqual(digest(text.slice(colon + 1)), inst.digest))
    return 401;
  inst.state = 'running';
  armHangTimer(inst);
  return 200;
}

const server = createServer((req, res) => {
  req.resume();
  if (req.method === 'GET' && (req.url === '/health' || req.url === '/pids')) {
    const out = {};
    for (const [key, inst] of instances) out[key] = req.url === '/health' ? inst.state : (inst.child?.pid ?? null);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(req.url === '/health' ? { status: 'ok', instances: out } : out));
    return;
  }
  res.writeHead(checkin(req));
  res.end();
});

server.listen(0, '127.0.0.1', () => {
  baseUrl = `http://127.0.0.1:${server.address().port}/`;
  console.log(`listening on ${baseUrl.slice(0, -1)}`);
  for (const { key, port } of config.instances) {
    const inst = { key, port, state: 'starting', child: null, timer: null, secret: '', digest: null };
    instances.set(key, inst);
    launch(inst);
  }
});

process.on('SIGTERM', () => {
  stopping = true;
  for (const inst of instances.values()) {
    clearTimeout(inst.timer);
    try {
      process.kill(-inst.child.pid, 'SIGKILL');
    } catch {}
  }
  server.close();
  setTimeout(() => process.exit(0), 200);
});
