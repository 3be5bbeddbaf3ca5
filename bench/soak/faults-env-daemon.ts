import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { DESCRIPTORS, FLOOD, TOKEN } from './config.ts';
import type { SoakContext } from './context.ts';
import { allow, runningNow } from './faults-env.ts';
import { seededRng } from './prng.ts';
import { isLive } from './procscan.ts';
import { watchRecovery } from './recovery.ts';
import { check, countFault } from './state.ts';

/** Faults in the daemon's environment on the daemon side: a request flood and descriptor pressure. */

/** One junk control request: wrong token, unknown key, malformed or missing credentials. */
function junk(url: string, agent: Agent, key: string, variant: number): Promise<number | string> {
  const auth = [
    `Basic ${Buffer.from(`${key}:not-${TOKEN}`).toString('base64')}`,
    `Basic ${Buffer.from(`nobody-${variant}:${TOKEN}`).toString('base64')}`,
    'Basic !!!not-base64!!!',
    null,
  ][variant % 4];
  const target = variant % 4 === 1 ? `nobody-${variant}` : key;
  return new Promise((resolve) => {
    const headers: Record<string, string> = { 'content-length': '0' };
    if (auth) headers.authorization = auth;
    const req = request(`${url}/instances/${target}/restart`, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    // A loaded machine can starve the daemon for seconds: no answer within 5 s is what counts as none.
    req.setTimeout(5000, () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', (err) => resolve(err.message));
    req.end();
  });
}

/** At most FLOOD.requests junk requests over at most FLOOD.maxMs; none may be taken (2xx). */
export async function requestFlood(ctx: SoakContext): Promise<void> {
  const { s } = ctx;
  // Its own PRNG: how many requests fit in the time varies with the machine, and must not shift the plan's draws.
  const rng = seededRng(ctx.rng.int(1, 2 ** 31 - 1));
  const keys = [...s.tracks.values()].filter((t) => t.configured).map((t) => t.key);
  countFault(s, 'request-flood');
  const agent = new Agent({ keepAlive: true, maxSockets: FLOOD.concurrency });
  const statuses = new Map<number, number>();
  let lastError = '';
  const started = Date.now();
  const deadline = started + FLOOD.maxMs;
  let sent = 0;
  const worker = async () => {
    while (sent < FLOOD.requests && Date.now() < deadline) {
      sent++;
      const answer = await junk(s.daemonUrl, agent, rng.pick(keys), rng.int(0, 1_000_000));
      const status = typeof answer === 'number' ? answer : 0;
      if (typeof answer === 'string') lastError = answer;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: FLOOD.concurrency }, worker));
  agent.destroy();
  const taken = [...statuses].filter(([code]) => code >= 200 && code < 300).reduce((n, [, c]) => n + c, 0);
  const summary = [...statuses].map(([code, n]) => `${code || 'no answer'}: ${n}`).join(', ');
  s.log(
    `fault request-flood: ${sent} junk requests in ${Date.now() - started} ms (${summary})${lastError ? `; last error: ${lastError}` : ''}`,
  );
  check(s, 'junk-refused', taken === 0, () => `${taken} of ${sent} requests with junk credentials were taken`);
}

function openDescriptors(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

function setNofile(pid: number, soft: string, hard: string): void {
  execFileSync('prlimit', ['--pid', String(pid), `--nofile=${soft}:${hard}`], { stdio: 'pipe' });
}

/**
 * Lowers the daemon's descriptor limit to what it holds plus a little, holds idle connections (one header byte every
 * few seconds) past that, kills one server so a relaunch meets the pressure, then lets everything go.
 */
export async function descriptorPressure(ctx: SoakContext): Promise<void> {
  const { s, rng } = ctx;
  const pid = s.daemonPid;
  if (pid === null) return;
  const [soft = 'unlimited', hard = 'unlimited'] = execFileSync(
    'prlimit',
    ['--pid', String(pid), '--nofile', '-o', 'SOFT,HARD', '--noheadings', '--raw'],
    { encoding: 'utf8' },
  )
    .trim()
    .split(/\s+/);
  const limit = openDescriptors(pid) + DESCRIPTORS.headroom;
  countFault(s, 'descriptor-pressure');
  // Another fault or request on a struck instance while this one lasts excuses it (recovery.ts).
  const startedAt = Date.now();
  const struck = runningNow(ctx);
  allow('descriptor-pressure', struck);
  s.starvedUntil = Number.POSITIVE_INFINITY;
  setNofile(pid, String(limit), hard);
  const url = new URL(s.daemonUrl);
  // Each connection sends a valid request head one byte at a time (the header value never ends), so it stays a
  // request in progress, never a malformed one; a connection the daemon drops is replaced while the fault lasts.
  const header = 'POST /instances/x/restart HTTP/1.1\r\nHost: soak\r\nX-Slow: ';
  const conns: Array<{ sock: Socket; sent: number }> = [];
  let opened = 0;
  const topUp = () => {
    for (let i = 0; i < DESCRIPTORS.idle && opened < DESCRIPTORS.idle * 20; i++) {
      if (conns[i] && !conns[i]?.sock.destroyed) continue;
      const sock = connect(Number(url.port), '127.0.0.1');
      sock.on('error', () => {});
      sock.write(header.slice(0, 1));
      conns[i] = { sock, sent: 1 };
      opened++;
    }
  };
  topUp();
  const trickle = setInterval(() => {
    for (const c of conns)
      if (!c.sock.destroyed) c.sock.write(c.sent < header.length ? (header[c.sent++] ?? 'x') : 'x');
  }, DESCRIPTORS.trickleMs);
  const refill = setInterval(topUp, 250);
  await sleep(500);
  const victim = rng.pick(struck.length > 0 ? struck : [null]);
  if (victim?.status?.pid) signal(victim.status.pid, 'SIGKILL');
  s.log(
    `fault descriptor-pressure: daemon ${pid} NOFILE ${soft} -> ${limit} (holds ${openDescriptors(pid)}), ` +
      `${conns.filter((c) => !c.sock.destroyed).length} idle connections, killed ${victim?.key ?? 'no server'}`,
  );
  await sleep(DESCRIPTORS.holdMs);
  clearInterval(trickle);
  clearInterval(refill);
  const alive = conns.filter((c) => !c.sock.destroyed).length;
  for (const c of conns) c.sock.destroy();
  // A daemon killed meanwhile by the plan is gone with its limit; the next one starts with the soak's own.
  if (s.daemonPid === pid && isLive(pid)) setNofile(pid, soft, hard);
  // A connection accepted just before the limit came back may still be reset.
  s.starvedUntil = Date.now() + 1000;
  s.log(`fault descriptor-pressure ended: ${alive} connections closed (${opened} opened in all), NOFILE ${soft} again`);
  watchRecovery(
    ctx,
    'descriptor-pressure',
    struck.map((t) => t.key),
    Date.now(),
    startedAt,
  );
}
