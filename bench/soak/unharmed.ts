import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readMemory } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import type { SoakContext } from './context.ts';
import { check, type FaultKind, since } from './state.ts';
import { schedstat } from './watch-status.ts';

/**
 * What a hostile fault (a pipe, an endless answer, a clock step) must leave the daemon: /health answering within 1 s
 * all along, and, while endless answers go on, its RSS within 100 MB of its figure just before (the bounds).
 * A look is three tries of 1 s, so a loaded machine may miss two; a daemon killed by the plan meanwhile, or one out
 * of descriptors on purpose (descriptor-pressure), excuses the looks it spoils.
 */

const RSS_GROWTH_MB = 100;

/** The daemon's resident set in MB, null when it cannot be read. */
const rssMb = (pid: number): number | null => {
  const mem = readMemory(pid);
  return mem ? mem.rss / 1048576 : null;
};

async function healthWithin1s(url: string): Promise<boolean> {
  for (let i = 0; i < 3; i++) {
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) }).then(
      async (r) => {
        await r.arrayBuffer();
        return r.status === 200;
      },
      () => false,
    );
    if (ok) return true;
  }
  return false;
}

/**
 * Looks at the daemon every 500 ms until `until()` is true or `maxMs` has passed: /health (health-within-1s), and
 * with `rss` its RSS against the figure now (rss-within-100mb, one check at the end, the peak). Resolves when done.
 */
export async function unharmedWhile(
  ctx: SoakContext,
  kind: FaultKind,
  maxMs: number,
  opts: { rss: boolean; until?: () => boolean },
): Promise<void> {
  const { s } = ctx;
  const pid = s.daemonPid;
  const ready = s.daemonReadyAt;
  if (pid === null || ready === null) return;
  const before = rssMb(pid);
  let peak = before ?? 0;
  const same = () => s.daemonPid === pid && s.daemonReadyAt === ready;
  const deadline = Date.now() + maxMs;
  // Bounded: one look every 500 ms (each at most 3 s) until the deadline.
  while (Date.now() < deadline && same() && !opts.until?.()) {
    const at = Date.now();
    peak = Math.max(peak, rssMb(pid) ?? 0);
    const waited = schedstat(pid)?.wait ?? 0;
    const ok = await healthWithin1s(s.daemonUrl);
    // As the lag check does: a look the machine starved is reported, not held against the daemon. Its event-loop
    // thread waited as long as the answer's second for a CPU, or the soak itself was held up (the look outlasted
    // its three tries by a second).
    const starved = (schedstat(pid)?.wait ?? 0) - waited >= 1000 || Date.now() - at > 4000;
    const counted = same() && at > s.starvedUntil && Date.now() > s.starvedUntil;
    if (counted && !ok && starved)
      s.log(`${kind}: /health not answered within 1 s in a look the machine starved (${since(s, at)})`);
    else if (counted)
      check(
        s,
        'health-within-1s',
        ok,
        () => `${kind}: daemon ${pid}: /health not answered within 1 s, 3 tries, at ${since(s, at)}`,
      );
    await sleep(Math.max(0, 500 - (Date.now() - at)));
  }
  if (!opts.rss || before === null || !same()) return;
  check(
    s,
    'rss-within-100mb',
    peak - before < RSS_GROWTH_MB,
    () => `${kind}: daemon ${pid}: RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at its peak`,
  );
  s.log(`fault ${kind}: daemon RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at most meanwhile`);
}

/** Bytes in daemon.log now: where the lines a fault causes begin. */
export const daemonLogSize = (dir: string): number => {
  try {
    return statSync(join(dir, 'daemon.log')).size;
  } catch {
    return 0;
  }
};

/** The lines daemon.log gained since byte `from`. */
export function daemonLogSince(dir: string, from: number): string[] {
  const file = join(dir, 'daemon.log');
  const size = daemonLogSize(dir);
  if (size <= from) return [];
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - from);
    readSync(fd, buf, 0, buf.length, from);
    return buf.toString('utf8').split('\n');
  } finally {
    closeSync(fd);
  }
}

/** The first line daemon.log gains since byte `from` that matches `re`, waited for up to `ms`; null when none came. */
export async function daemonLogLine(dir: string, from: number, re: RegExp, ms: number): Promise<string | null> {
  const deadline = Date.now() + ms;
  // Bounded: one read every 250 ms until the deadline.
  for (;;) {
    const line = daemonLogSince(dir, from).find((l) => re.test(l));
    if (line !== undefined || Date.now() > deadline) return line ?? null;
    await sleep(250);
  }
}
