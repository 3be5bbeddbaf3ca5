import { backoffMs, DAEMON_SETTLE_MS, hangBoundMs, ORPHAN_GRACE_MS, relaunchBoundMs } from './bounds.ts';
import { isLive, listeningPorts, type OurProcess, scanOurs, tcpListeners } from './procscan.ts';
import { check, type SoakState, serverDown, since, type Track } from './state.ts';

/** The checks made from /proc every scan (500 ms): copies, ports, orphans, relaunches and hang kills. */

/**
 * When the daemon that answers settled (adoption, leftover shutdowns and first launches done): when it was first
 * seen so (`settleTick`), at the latest DAEMON_SETTLE_MS after it answered; null while no daemon answers.
 */
export function settleAt(s: SoakState): number | null {
  if (s.daemonReadyAt === null) return null;
  const deadline = s.daemonReadyAt + DAEMON_SETTLE_MS;
  return s.settled?.ready === s.daemonReadyAt ? Math.min(s.settled.at, deadline) : deadline;
}

export const settled = (s: SoakState, now: number) => {
  const at = settleAt(s);
  return at !== null && now > at;
};

/** A server the daemon has launched or adopted and is not stopping (checked in or not yet). */
const LAUNCHED = /^server\.(starting|running|awaiting-checkin)$/;

/**
 * Marks the daemon settled once that is a fact rather than a matter of time: an answer it gave since it came up
 * names, for every configured instance, a launched server (its check-in may still be due) that the scan sees as the
 * only one of its key, and no server or child is left over. A daemon with many servers or a loaded machine may never
 * show that all at once: DAEMON_SETTLE_MS stays the deadline (settleAt).
 */
function settleTick(s: SoakState, now: number): void {
  const ready = s.daemonReadyAt;
  if (ready === null || s.settled?.ready === ready || s.statusAt === null || s.statusAt < ready) return;
  if (s.orphanChildren.size > 0) return;
  for (const t of s.tracks.values()) {
    if (t.mismatch.size > 0) return;
    if (!t.configured) continue;
    const st = t.status;
    if (!st || !LAUNCHED.test(st.state) || st.pid === null || t.scanPid !== st.pid) return;
  }
  s.settled = { ready, at: now };
  s.log(`daemon settled: every instance has the server it names (${now - ready} ms after it answered)`);
}

function oneServerPerInstance(s: SoakState, servers: OurProcess[]): void {
  const byKey = new Map<string, number[]>();
  const pids = new Set(servers.map((p) => p.pid));
  for (const p of servers) {
    // A server's fork between fork() and exec() still shows its parent's command line: a child, not a copy.
    if (p.parent !== null && pids.has(p.parent)) continue;
    byKey.set(p.key, [...(byKey.get(p.key) ?? []), p.pid]);
  }
  for (const [key, pids] of byKey) {
    // The scan is not atomic: an old server read alive may have died before the new one was read. Re-read both.
    const live = pids.length > 1 ? pids.filter(isLive) : pids;
    // One violation per set of copies, not one per scan while they live.
    const copies = `${key} ${live.join(' ')}`;
    const ok = live.length <= 1 || reportedCopies.has(copies);
    if (live.length > 1) reportedCopies.add(copies);
    check(s, 'one-server-per-instance', ok, () => `${key} has ${live.length} servers: ${live.join(' ')}`);
  }
}
const reportedCopies = new Set<string>();

function oneHolderPerPort(s: SoakState, procs: OurProcess[]): void {
  const listeners = tcpListeners();
  const holders = new Map<number, Set<number>>();
  const scanned = new Set(procs.map((p) => p.pid));
  for (const p of procs) {
    // A child holding its own server's socket (an escaping helper is handed it) shares that server's hold.
    const holder = p.kind === 'child' && p.parent !== null && scanned.has(p.parent) ? p.parent : p.pid;
    for (const port of listeningPorts(p.pid, listeners))
      holders.set(port, (holders.get(port) ?? new Set()).add(holder));
  }
  for (const [port, pids] of holders) {
    const live = [...pids].filter(isLive);
    check(s, 'one-holder-per-port', live.length <= 1, () => `port ${port} is held by ${live.join(' ')}`);
  }
}

/**
 * A server the daemon does not name for its instance (another pid, or none) may live ORPHAN_GRACE_MS (a graceful
 * shutdown, a launch whose pid the daemon has not recorded yet). The verdict rests on the daemon's word, not on the
 * clock alone: a server is an orphan only when an answer asked for that long after it was first seen (and after the
 * daemon settled) still names another pid, and the server still lives. A status poll that times out (a starved
 * daemon) leaves the tracks holding an older answer; that answer is no verdict, the next one is (a daemon that stops
 * answering is daemon-health's to report).
 */
function noOrphans(s: SoakState, servers: OurProcess[], now: number): void {
  const seen = new Set<number>();
  const from = settleAt(s);
  for (const p of servers) {
    seen.add(p.pid);
    const t = s.tracks.get(p.key);
    const expected = t?.configured ? (t.status?.pid ?? null) : null;
    if (!t || p.pid === expected) {
      t?.mismatch.delete(p.pid);
      if (settled(s, now)) check(s, 'no-orphan', true, () => '');
      continue;
    }
    const first = t.mismatch.get(p.pid) ?? now;
    t.mismatch.set(p.pid, first);
    if (!settled(s, now) || from === null) continue;
    const since0 = Math.max(first, from);
    // A configured instance: the answer that named `expected` for it; a removed one: any answer (it is not listed).
    const asked = (t.configured ? t.statusAt : s.statusAt) ?? 0;
    if (asked - since0 <= ORPHAN_GRACE_MS) {
      check(s, 'no-orphan', true, () => '');
      continue;
    }
    // The scan is not atomic: a server read alive may have exited since.
    if (!isLive(p.pid)) continue;
    const state = t.configured ? (t.status?.state ?? 'no status') : 'not configured';
    check(
      s,
      'no-orphan',
      false,
      () =>
        `${p.key}: server ${p.pid} alive since ${since(s, first)}, while the daemon, asked at ${since(s, asked)}, says ${expected} (${state})`,
    );
    // Reported once, then watched again from now.
    t.mismatch.set(p.pid, now);
  }
  for (const t of s.tracks.values()) for (const pid of t.mismatch.keys()) if (!seen.has(pid)) t.mismatch.delete(pid);
}

function noOrphanChildren(s: SoakState, children: OurProcess[], now: number): void {
  const seen = new Set<number>();
  for (const c of children) {
    seen.add(c.pid);
    if (c.parent !== null && isLive(c.parent)) {
      s.orphanChildren.delete(c.pid);
      if (settled(s, now)) check(s, 'no-orphan-child', true, () => '');
      continue;
    }
    const first = s.orphanChildren.get(c.pid) ?? now;
    s.orphanChildren.set(c.pid, first);
    // A child may outlive its server only while no daemon runs (an adopted server's group is killed on its exit).
    if (settled(s, now) && now - Math.max(first, settleAt(s) ?? now) > ORPHAN_GRACE_MS) {
      check(s, 'no-orphan-child', false, () => `${c.key}: child ${c.pid} outlived its server ${c.parent}`);
      s.orphanChildren.set(c.pid, now);
    } else check(s, 'no-orphan-child', true, () => '');
  }
  for (const pid of s.orphanChildren.keys()) if (!seen.has(pid)) s.orphanChildren.delete(pid);
}

/**
 * Whether `at` falls in a start-up: a daemon's until it settled (settleAt: adoption, leftover shutdowns, thirty
 * first launches at once) or an instance's first DAEMON_SETTLE_MS after a reload added it. A server down then is launched, not relaunched.
 */
const startingUp = (s: SoakState, t: Track, at: number) =>
  at < (settleAt(s) ?? at) || at < t.configuredAt + DAEMON_SETTLE_MS;

function relaunches(s: SoakState, t: Track, pid: number | null, now: number): void {
  const up = pid !== null;
  const last = t.scanPid;
  t.scanPid = pid;
  if (!t.configured) {
    t.downSince = null;
    t.upSince = null;
    return;
  }
  // Ended and relaunched between two scans (a relaunch with no back-off takes less than one): within any bound.
  // Counted in the streak, not in the relaunch figures (its gap is unknown, under a scan's 500 ms).
  if (up && t.downSince === null && last !== null && pid !== last && !isLive(last)) {
    serverDown(t, now);
    t.downSince = null;
    t.upSince = now;
    if (settled(s, now) && !startingUp(s, t, now)) check(s, 'relaunch-within-bound', true, () => '');
    return;
  }
  if (!up) {
    if (t.downSince === null) serverDown(t, now);
    const bound = relaunchBoundMs(t.streak);
    const excused = t.downExcused || !settled(s, now) || startingUp(s, t, t.downSince!);
    if (!excused && !t.downReported && now - Math.max(t.downSince!, t.configuredAt) > bound) {
      t.downReported = true;
      check(
        s,
        'relaunch-within-bound',
        false,
        () =>
          `${t.key}: no server since ${since(s, t.downSince ?? now)} (state ${t.status?.state}; failure ${t.streak} of its streak, bound ${bound} ms)`,
      );
    }
    return;
  }
  t.upSince ??= now;
  if (t.downSince !== null) relaunched(s, t, now);
}

/** A new server of `t` was seen at `now` after `t.downSince`: the relaunch is timed against its bound. */
export function relaunched(s: SoakState, t: Track, now: number): void {
  if (t.downSince === null) return;
  const excused = t.downExcused || startingUp(s, t, t.downSince);
  if (!excused && !t.downReported) {
    const took = now - t.downSince;
    s.relaunchMs.push(took);
    s.relaunchExcessMs.push(took - backoffMs(t.streak));
    check(
      s,
      'relaunch-within-bound',
      took <= relaunchBoundMs(t.streak),
      () =>
        `${t.key}: relaunched after ${took} ms (failure ${t.streak} of its streak, back-off ${backoffMs(t.streak)} ms)`,
    );
  }
  t.downSince = null;
}

function hangKills(s: SoakState, now: number): void {
  for (const h of s.hangs) {
    const t = s.tracks.get(h.key);
    const bound = hangBoundMs(t?.timeoutSeconds ?? 10);
    if (!isLive(h.pid)) {
      // A daemon restart during the freeze moves the deadline (the new daemon arms the timeout at adoption).
      const undisturbed = s.daemonReadyAt !== null && s.daemonReadyAt < h.at;
      if (undisturbed) s.hangKillMs.push(now - h.at);
      check(
        s,
        'hang-killed-within-bound',
        now - h.at <= bound || !undisturbed,
        () => `${h.key}: frozen server ${h.pid} killed ${now - h.at} ms after SIGSTOP`,
      );
      h.reported = true;
      continue;
    }
    const from = Math.max(h.at, settleAt(s) ?? now);
    if (!h.reported && settled(s, now) && t?.configured && now - from > bound) {
      h.reported = true;
      check(
        s,
        'hang-killed-within-bound',
        false,
        () => `${h.key}: frozen server ${h.pid} alive ${now - h.at} ms after SIGSTOP`,
      );
    }
  }
  s.hangs = s.hangs.filter((h) => !h.reported);
}

export function scanTick(s: SoakState): OurProcess[] {
  const now = Date.now();
  const procs = scanOurs(s.run);
  const servers = procs.filter((p) => p.kind === 'server');
  oneServerPerInstance(s, servers);
  oneHolderPerPort(s, procs);
  noOrphans(s, servers, now);
  noOrphanChildren(
    s,
    procs.filter((p) => p.kind === 'child'),
    now,
  );
  // A server's fork (a child with its command line) is not the server.
  const pids = new Set(servers.map((p) => p.pid));
  const serverOf = new Map<string, number>();
  for (const p of servers) if (p.parent === null || !pids.has(p.parent)) serverOf.set(p.key, p.pid);
  for (const t of s.tracks.values()) relaunches(s, t, serverOf.get(t.key) ?? null, now);
  hangKills(s, now);
  settleTick(s, now);
  return procs;
}
