import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePorts, WATCHDOG } from '../lib/env.ts';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { DESCRIPTORS, FLOOD, SECOND_DAEMON_EXIT_MS, TOKEN } from './config.ts';
import type { SoakContext } from './context.ts';
import { allow, runningNow } from './faults-env.ts';
import { seededRng } from './prng.ts';
import { isLive, scanOurs } from './procscan.ts';
import { watchRecovery } from './recovery.ts';
import { check, countFault } from './state.ts';

/** Faults in the daemon's environment on the daemon side (issue 23): a flood, descriptor pressure, a second daemon. */

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
  const struck = runningNow(ctx);
  allow('descriptor-pressure', struck);
  setNofile(pid, String(limit), hard);
  const url = new URL(s.daemonUrl);
  const sockets: Socket[] = [];
  const header = 'POST /instances/x/restart HTTP/1.1\r\nHost: soak\r\nX-Slow: ';
  for (let i = 0; i < DESCRIPTORS.idle; i++) {
    const sock = connect(Number(url.port), '127.0.0.1');
    sock.on('error', () => {});
    sock.write(header[0] ?? 'P');
    sockets.push(sock);
  }
  const trickle = setInterval(() => {
    for (const sock of sockets) if (!sock.destroyed) sock.write('x');
  }, DESCRIPTORS.trickleMs);
  await sleep(500);
  const victim = rng.pick(struck.length > 0 ? struck : [null]);
  if (victim?.status?.pid) signal(victim.status.pid, 'SIGKILL');
  s.log(
    `fault descriptor-pressure: daemon ${pid} NOFILE ${soft} -> ${limit} (holds ${openDescriptors(pid)}), ` +
      `${sockets.filter((x) => !x.destroyed).length} idle connections, killed ${victim?.key ?? 'no server'}`,
  );
  await sleep(DESCRIPTORS.holdMs);
  clearInterval(trickle);
  for (const sock of sockets) sock.destroy();
  // A daemon killed meanwhile by the plan is gone with its limit; the next one starts with the soak's own.
  if (s.daemonPid === pid && isLive(pid)) setNofile(pid, soft, hard);
  s.log(`fault descriptor-pressure ended: connections closed, NOFILE ${soft} again`);
  watchRecovery(
    ctx,
    'descriptor-pressure',
    struck.map((t) => t.key),
    Date.now(),
  );
}

/**
 * Starts a second daemon in the same folder on another port: it must exit 1 at once, never answer on its port,
 * and leave every server of the first daemon alone.
 */
export async function secondDaemon(ctx: SoakContext): Promise<void> {
  const { s } = ctx;
  const [port] = await freePorts(1);
  const before = new Map(runningNow(ctx).map((t) => [t.key, t.status?.pid ?? 0]));
  countFault(s, 'second-daemon');
  const out = openSync(join(s.dir, 'second-daemon.log'), 'a');
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, [WATCHDOG, 'start', '--urls', url], { cwd: s.dir, stdio: ['ignore', out, out] });
  closeSync(out);
  let code: number | null | undefined;
  proc.once('exit', (c) => {
    code = c;
  });
  const started = Date.now();
  let answered = false;
  // Bounded: polls every 100 ms until it exits or SECOND_DAEMON_EXIT_MS pass.
  while (code === undefined && Date.now() - started < SECOND_DAEMON_EXIT_MS) {
    answered ||= await fetch(`${url}/health`, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    await sleep(100);
  }
  const tookMs = Date.now() - started;
  let leftovers = 0;
  if (code === undefined && proc.pid !== undefined) {
    // It did not refuse (a violation, below): it is stopped, and the servers it launched are ended by pid, so one
    // violation does not turn into a run of duplicates and orphans for every later check.
    const launched = scanOurs(s.run).filter((p) => p.kind === 'server' && p.parent === proc.pid);
    signal(proc.pid, 'SIGTERM');
    for (let i = 0; i < 50 && code === undefined; i++) await sleep(100);
    if (code === undefined) signal(proc.pid, 'SIGKILL');
    for (const p of launched.filter((x) => isLive(x.pid))) {
      leftovers++;
      for (const target of [-p.pid, p.pid]) signal(target, 'SIGKILL');
    }
  }
  const live = new Map(
    scanOurs(s.run)
      .filter((p) => p.kind === 'server')
      .map((p) => [p.key, p.pid]),
  );
  const disturbed = [...before].filter(([key, pid]) => {
    const t = s.tracks.get(key);
    return t !== undefined && t.touchedAt <= started && live.get(key) !== pid;
  });
  s.log(
    `fault second-daemon on port ${port}: ${code === undefined ? 'still running' : `exit ${code}`} after ${tookMs} ms` +
      `${answered ? ', answered /health' : ''}; ${disturbed.length} of the first daemon's servers disturbed` +
      `${leftovers > 0 ? `; ended ${leftovers} servers it left` : ''} (its output: second-daemon.log)`,
  );
  check(
    s,
    'second-daemon-refused',
    code === 1 && !answered && disturbed.length === 0,
    () =>
      `a second daemon in the same folder: ${code === undefined ? `still running after ${tookMs} ms` : `exit ${code} after ${tookMs} ms`}` +
      `${answered ? ', answered on its own port' : ''}; servers changed: ${disturbed.map(([k, p]) => `${k} (was ${p})`).join(', ') || 'none'}`,
  );
}
