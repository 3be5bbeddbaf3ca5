import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DAEMON_SETTLE_MS } from './bounds.ts';
import { AUDIT_ROTATION, DAEMON_LOG_BYTES_PER_MINUTE, SERVER_LOG_ROTATION } from './config.ts';
import { isLive } from './procscan.ts';
import { check, type SoakState } from './state.ts';

/**
 * The checks the environment faults add: the daemon alive and answering at every check, and every log
 * it writes within its bound whatever strangers send or the disk does.
 */

/** A line may cross the bound (the writer rotates before the line that would pass it, or copy-truncates at a poll). */
const LINE_SLACK = 1024 * 1024;
/**
 * With PersistServers a server writes its own server.log; while no daemon runs (killed, starting) nothing bounds it,
 * so a chatty server grows it by its rate times the outage. The size bound holds again this long after a daemon is
 * ready: its follower's first poll (0.5 s) rotates the file.
 */
const SERVER_LOG_SETTLE_MS = 2000;
/** /health may be slow to answer while the machine or the daemon is loaded (descriptor pressure): its patience. */
const HEALTH_PATIENCE_MS = 8000;

function size(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** GET /health answered at all (any status: a degraded daemon may say 503, and still answers). */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

/** The daemon's pid is alive and /health answers within HEALTH_PATIENCE_MS (a deliberate kill meanwhile excuses). */
export async function healthTick(s: SoakState): Promise<void> {
  const pid = s.daemonPid;
  const ready = s.daemonReadyAt;
  if (pid === null || ready === null) return;
  const deadline = Date.now() + HEALTH_PATIENCE_MS;
  let ok = false;
  // Bounded: at most one try a second until the deadline.
  for (let i = 0; i < 10 && !ok && Date.now() < deadline; i++) {
    ok = isLive(pid) && (await answers(s.daemonUrl));
    if (!ok) await new Promise((r) => setTimeout(r, 1000));
  }
  if (s.daemonReadyAt !== ready || s.daemonPid !== pid) return;
  check(s, 'daemon-health', ok, () =>
    isLive(pid) ? `daemon ${pid}: /health did not answer for ${HEALTH_PATIENCE_MS} ms` : `daemon ${pid} is gone`,
  );
}

/** Bounds already reported (one violation per crossing, not one per tick while it lasts). */
const over = new Set<string>();

function bounded(s: SoakState, what: string, ok: boolean, detail: () => string): void {
  if (ok) {
    over.delete(what);
    check(s, 'logs-bounded', true, () => '');
  } else if (!over.has(what)) {
    over.add(what);
    check(s, 'logs-bounded', false, detail);
  }
}

const kib = (n: number) => `${Math.round(n / 1024)} KiB`;

/** Every server's logs/: at most `keep` files, each at most `maxBytes` (and a line). */
function serverLogs(s: SoakState): void {
  const { maxBytes, keep } = SERVER_LOG_ROTATION;
  // Held while the daemon is out of descriptors too (descriptor-pressure): a copy it cannot open costs the lines
  // since the last rotation, not the bound. A daemon without PersistServers does not follow a leftover's log: it shuts the server down (within the settle
  // time), and the next launch rotates the file it left.
  const settle = s.daemonPersists ? SERVER_LOG_SETTLE_MS : DAEMON_SETTLE_MS;
  const daemonBounds = s.daemonReadyAt !== null && Date.now() - s.daemonReadyAt >= settle;
  for (const key of names(join(s.dir, 'instances'))) {
    const dir = join(s.dir, 'instances', key, 'logs');
    const logs = names(dir).filter((n) => /^server\.log(\.\d+)?$/.test(n));
    bounded(
      s,
      `${key} count`,
      logs.length <= keep,
      () => `${key}: ${logs.length} server logs (${logs.join(', ')}), keep is ${keep}`,
    );
    for (const name of logs) {
      if (!daemonBounds) continue;
      const bytes = size(join(dir, name));
      bounded(
        s,
        `${key} ${name}`,
        bytes <= maxBytes + LINE_SLACK,
        () => `${key}: ${name} is ${kib(bytes)}, bound ${kib(maxBytes)}`,
      );
    }
  }
}

/** audit.log within its rotation size, and all its files together within the retention. */
function auditLog(s: SoakState): void {
  const dir = join(s.dir, 'logs');
  const files = names(dir).filter((n) => n.startsWith('audit.log'));
  const current = size(join(dir, 'audit.log'));
  const total = files.reduce((sum, n) => sum + size(join(dir, n)), 0);
  const { maxBytes, keep } = AUDIT_ROTATION;
  bounded(
    s,
    'audit.log',
    current <= maxBytes + LINE_SLACK / 16,
    () => `audit.log is ${kib(current)}, bound ${kib(maxBytes)}`,
  );
  bounded(
    s,
    'audit.log*',
    total <= (keep + 1) * maxBytes + LINE_SLACK / 16,
    () => `audit logs hold ${kib(total)} in ${files.length} files, bound ${keep + 1} × ${kib(maxBytes)}`,
  );
}

/** daemon.log sizes over the last minute (bounded: one sample per tick, older than 65 s dropped). */
const samples: Array<{ at: number; bytes: number }> = [];

function daemonLogRate(s: SoakState): void {
  const now = Date.now();
  const bytes = size(join(s.dir, 'daemon.log'));
  samples.push({ at: now, bytes });
  while (samples.length > 0 && now - (samples[0]?.at ?? now) > 65_000) samples.shift();
  const oldest = samples.find((x) => now - x.at <= 60_000);
  const grown = oldest ? bytes - oldest.bytes : 0;
  bounded(
    s,
    'daemon.log rate',
    grown <= DAEMON_LOG_BYTES_PER_MINUTE,
    () => `daemon.log grew ${kib(grown)} in the last minute, bound ${kib(DAEMON_LOG_BYTES_PER_MINUTE)}`,
  );
}

export function logsTick(s: SoakState): void {
  serverLogs(s);
  auditLog(s);
  daemonLogRate(s);
}
