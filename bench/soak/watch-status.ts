import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMemory } from '../lib/proc.ts';
import { fingerprint } from './builds.ts';
import { isLive } from './procscan.ts';
import { check, type SoakState, type Status, serverDown, since, type Track } from './state.ts';
import { relaunched } from './watch-procs.ts';

/** The checks made from the daemon's own answers and the instance folders: status, bin/, data.json, RSS, lag. */

interface ApiStatus extends Status {
  key: string;
  /** An update check asked for is running or queued: a build it finds restarts a stopped.failing instance. */
  checking: boolean;
  updatePending: boolean;
}

/**
 * States in which an instance is rightly without a server for longer than a back-off. A launch blocked by the
 * daemon's environment (descriptors, a held port) is retried on a back-off of its own; recovered-after-fault holds
 * it to coming back once the fault is over.
 */
const EXCUSED = /^(stopped|rolling-back|restoring|restarting\.blocked)/;

/**
 * Whether `state` excuses `t` from the relaunch bound. Every relaunch passes through `updating` (the check before a
 * launch); it takes long only where there is something to download (Manifest instances), and is instant elsewhere,
 * where excusing it would excuse most relaunches.
 */
const excused = (t: Track, state: string) => EXCUSED.test(state) || (t.manifest && state.startsWith('updating'));

export async function statusTick(s: SoakState): Promise<void> {
  if (s.daemonReadyAt === null) return;
  const sentAt = Date.now();
  let list: ApiStatus[];
  try {
    const res = await fetch(`${s.daemonUrl}/api/instances`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) return;
    list = (await res.json()) as ApiStatus[];
  } catch {
    return;
  } finally {
    if (s.daemonReadyAt !== null) s.statusMs.push(Date.now() - sentAt);
  }
  if (s.daemonReadyAt === null || s.daemonReadyAt > sentAt) return;
  const now = Date.now();
  // The answer reflects the daemon at sentAt or later: what it names is its word from then on. An instance it does
  // not list (a daemon still starting lists those it has set up so far) has no word: an older answer, maybe the
  // previous daemon's, must not stand in for one.
  s.statusAt = sentAt;
  const listed = new Set(list.map((st) => st.key));
  for (const t of s.tracks.values()) {
    if (listed.has(t.key)) continue;
    t.status = null;
    t.statusAt = null;
  }
  for (const st of list) {
    const t = s.tracks.get(st.key);
    if (!t) continue;
    const before = t.status;
    t.status = { state: st.state, pid: st.pid, restarts: st.restarts, startupFailures: st.startupFailures };
    t.statusAt = sentAt;
    if (excused(t, st.state) && t.downSince !== null) t.downExcused = true;
    // A launch the scans have not seen yet ends the wait for a relaunch; one that already ended (an exit at start)
    // is another failure of the streak.
    if (t.downSince !== null && st.pid !== null && before?.pid !== st.pid) {
      relaunched(s, t, now);
      if (isLive(st.pid)) t.upSince = now;
      else {
        serverDown(t, now);
        t.downExcused = excused(t, st.state);
      }
    }
    const stopped = st.state.startsWith('stopped');
    // Stopped for good only once no update check is under way (a build found restarts a failing instance).
    const settledStop = stopped && !st.checking && !st.updatePending;
    if (settledStop && t.stoppedSeenAt === null && sentAt > t.kickAt) t.stoppedSeenAt = sentAt;
    if (!stopped && t.stoppedSeenAt !== null) {
      check(
        s,
        'stopped-stays-down',
        t.kickAt > t.stoppedSeenAt,
        () =>
          `${t.key}: stopped at ${since(s, t.stoppedSeenAt!)}, ${st.state} at ${since(s, now)} with no request since`,
      );
      t.stoppedSeenAt = null;
    } else if (stopped) check(s, 'stopped-stays-down', true, () => '');
  }
}

let oldSecretRead = 0;

/** Every check-in a server made with its previous launch's secret was refused (401), as a stale token must be. */
function oldSecretsRefused(s: SoakState): void {
  let text = '';
  try {
    text = readFileSync(join(s.dir, 'old-secret-answers'), 'utf8');
  } catch {
    return;
  }
  const fresh = text.slice(oldSecretRead);
  const end = fresh.lastIndexOf('\n') + 1;
  oldSecretRead += end;
  for (const line of fresh.slice(0, end).split('\n').filter(Boolean)) {
    const [key, status] = line.split(' ');
    check(
      s,
      'old-secret-refused',
      !status?.startsWith('2'),
      () => `${key}: a check-in with the previous launch's secret got ${status}`,
    );
  }
}

/** Manifest instances whose bin/ has held a whole build once: from then on it must always hold one. */
const installed = new Set<string>();

/** Whether every configured Manifest instance has had a whole build in bin/. */
export const firstInstallsDone = (s: SoakState): boolean =>
  [...s.tracks.values()].every((t) => !t.manifest || !t.configured || installed.has(t.key));

/** bin/ of every Manifest instance is one known build whole; every data.json parses. */
export function filesTick(s: SoakState, known: ReadonlySet<string>): void {
  oldSecretsRefused(s);
  for (const t of s.tracks.values()) {
    const dir = join(s.dir, 'instances', t.key);
    const data = join(dir, 'data.json');
    if (existsSync(data)) {
      let ok = true;
      try {
        JSON.parse(readFileSync(data, 'utf8'));
      } catch {
        ok = false;
      }
      check(s, 'data-json-parses', ok, () => `${t.key}: data.json does not parse`);
    }
    if (!t.manifest || !existsSync(join(dir, 'data.json'))) continue;
    // Before the first install completes there is no bin/ at all; after it, bin/ must always be whole. Between the
    // install's two renames (bin → bin.prev, staging → bin) bin/ is missing and the old build whole in bin.prev
    // (src/updates/install/install.ts, put back at start if the daemon died there): that is allowed, and counted.
    const print = fingerprint(join(dir, 'bin'));
    const prev = existsSync(join(dir, 'bin')) ? null : fingerprint(join(dir, 'bin.prev'));
    if (print !== null && known.has(print)) installed.add(t.key);
    if (!installed.has(t.key)) continue;
    if (print === null && prev !== null) s.binSwapWindows++;
    const whole = print !== null ? known.has(print) : prev !== null && known.has(prev);
    check(
      s,
      'bin-complete',
      whole,
      () => `${t.key}: bin/ is ${print === null ? 'missing or empty' : 'no known build'}`,
    );
  }
}

const LAG = /^watchdog_event_loop_lag_p99_seconds(?:\{[^}]*\})?\s+([0-9.eE+-]+)/m;
const LAG_MAX = /^watchdog_event_loop_lag_max_seconds(?:\{[^}]*\})?\s+([0-9.eE+-]+)/m;
const UNCAUGHT = /^watchdog_uncaught_errors_total(?:\{[^}]*\})?\s+([0-9.eE+-]+)/gm;
const escapedReported = new Set<number>();

/** Time the daemon's main thread (the event loop) spent on a CPU and waiting for one, in ms (/proc/<pid>/schedstat). */
export function schedstat(pid: number): { run: number; wait: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return run === undefined || wait === undefined ? null : { run: run / 1e6, wait: wait / 1e6 };
  } catch {
    return null;
  }
}
let lastSched: { pid: number; at: number; run: number; wait: number } | null = null;

/** An idle reference process lagging this much (p99, ms) over a window means the machine itself was starved. */
const STARVED_REFERENCE_MS = 10;
const LAG_BOUND_MS = 20;
/** The sampling period of the daemon's monitorEventLoopDelay (src/metrics/collector.ts). */
const RESOLUTION_MS = 10;

/**
 * The run-queue wait that can by itself explain a p99 of LAG_BOUND_MS over a window: the histogram takes at most
 * one sample per RESOLUTION_MS, so a p99 at the bound needs 1 % of them each LAG_BOUND_MS late, and a sample is late
 * only by time the loop spent on its own work or waiting for a CPU. With less wait than this, the daemon's own work
 * made at least part of the lag.
 */
const explainingWaitMs = (windowMs: number) => Math.ceil((0.01 * windowMs) / RESOLUTION_MS) * LAG_BOUND_MS;

/**
 * RSS of the daemon and its event-loop lag p99 since the previous scrape. A p99 of 20 ms or more is a violation
 * unless the machine starved the daemon over that window: its event-loop thread waited for a CPU (schedstat: time
 * it was ready to run while other processes ran) at least as long as could explain that p99 by itself
 * (explainingWaitMs, 100 ms for the 5 s windows), or an idle reference Node process at the daemon's priority lagged
 * 10 ms or more too. Such a window is logged with its figures and counted apart; it is not a check.
 */
export async function metricsTick(
  s: SoakState,
  countLag: boolean,
  reference: () => Promise<number | null>,
): Promise<void> {
  if (s.daemonPid === null || s.daemonReadyAt === null) return;
  const mem = readMemory(s.daemonPid);
  if (mem) s.rss.push({ at: Date.now(), daemon: s.daemonPid, mb: mem.rss / 1048576 });
  try {
    const res = await fetch(`${s.daemonUrl}/metrics`, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    // An error that escaped every handler is caught and counted (watchdog_uncaught_errors_total), so the daemon
    // staying alive proves nothing about it: any count is a violation.
    const escaped = [...text.matchAll(UNCAUGHT)].reduce((n, m) => n + Number(m[1]), 0);
    const pid = s.daemonPid;
    // Once per daemon: its count only grows.
    const ok = escaped === 0 || escapedReported.has(pid);
    if (escaped > 0) escapedReported.add(pid);
    check(s, 'no-escaped-error', ok, () => `daemon ${pid}: ${escaped} error(s) escaped every handler (see daemon.log)`);
    const machine = await reference();
    const sched = schedstat(s.daemonPid);
    const prev = lastSched?.pid === s.daemonPid ? lastSched : null;
    lastSched = sched ? { pid: s.daemonPid, at: Date.now(), ...sched } : null;
    const value = LAG.exec(text)?.[1];
    if (value === undefined || !countLag || !prev || !sched) return;
    const ms = Number(value) * 1000;
    s.lagMaxMs.push(Number(LAG_MAX.exec(text)?.[1] ?? 0) * 1000);
    const wait = sched.wait - prev.wait;
    const cpu = sched.run - prev.run;
    const windowMs = Date.now() - prev.at;
    const disturbed =
      ms >= LAG_BOUND_MS &&
      ((machine !== null && machine >= STARVED_REFERENCE_MS) || wait >= explainingWaitMs(windowMs));
    s.lagP99.push({ at: Date.now(), ms, machine, wait, cpu, disturbed });
    const figures = `idle reference ${machine?.toFixed(1) ?? '?'} ms; the loop's thread: ${cpu.toFixed(0)} ms on a CPU, ${wait.toFixed(0)} ms waiting for one`;
    if (disturbed) s.log(`lag p99 ${ms.toFixed(1)} ms in a starved window (${figures})`);
    else check(s, 'loop-lag-p99', ms < LAG_BOUND_MS, () => `event-loop lag p99 ${ms.toFixed(1)} ms (${figures})`);
  } catch {
    // A scrape that fails (the daemon being killed) is not a lag reading.
  }
}
