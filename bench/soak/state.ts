import { FAULT_MESSAGES, KICK_MESSAGES, STREAK_RESET_MS } from './bounds.ts';
import type { SoakInstance } from './config.ts';

/** What the soak knows and has seen, shared by the fault injectors and the invariant checks. */

export const INVARIANTS = [
  'one-server-per-instance',
  'one-holder-per-port',
  'no-orphan',
  'no-orphan-child',
  'relaunch-within-bound',
  'hang-killed-within-bound',
  'stopped-stays-down',
  'bin-complete',
  'data-json-parses',
  'control-answers',
  'old-secret-refused',
  'chat-bounded',
  'nothing-left-after-sigterm',
  'daemon-alive',
  'rss-stable',
  'loop-lag-p99',
  // The daemon's environment: alive and answering, logs bounded, recovery once a fault ends.
  'daemon-health',
  'logs-bounded',
  'recovered-after-fault',
  'second-daemon-refused',
  'junk-refused',
  // Hostile files, answers and clocks (issue 40): /health answers within 1 s while one lasts, the daemon's RSS stays
  // within 100 MB of its figure before an endless answer, each is refused clearly, and a clock step kills no
  // healthy server.
  'health-within-1s',
  'rss-within-100mb',
  'hostile-refused',
  'no-false-hang',
  // The fault guard keeps the daemon up whatever escapes every handler: what it caught is a bug all the same.
  'no-escaped-error',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export const FAULT_KINDS = [
  'sigkill-server',
  'sigstop-sigcont',
  'sigstop-hang',
  'exit-at-start',
  'crash-loop',
  'ignore-shutdown',
  'slow-start',
  'fork',
  'old-secret',
  'control-burst',
  'control-same-moment',
  'daemon-kill-persist',
  'daemon-kill-no-persist',
  'config-reload',
  'update-ok',
  'update-truncate',
  'update-wrong-hash',
  'update-stall',
  'update-cdn-down',
  'webhook-429',
  'webhook-500',
  'webhook-silent',
  // The daemon's environment (bench/soak/faults-env.ts).
  'disk-full',
  'logs-removed',
  'fifo-log',
  'endless-status',
  // Hostile files, answers and clocks (bench/soak/faults-hostile.ts, faults-clock.ts).
  'fifo-config',
  'fifo-shared',
  'endless-hub',
  'endless-cdn',
  'clock-step',
  'request-flood',
  'descriptor-pressure',
  'escaping-helper',
  'second-daemon',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Status {
  state: string;
  pid: number | null;
  restarts: number;
  startupFailures: number;
}

export interface Track extends SoakInstance {
  configured: boolean;
  /** When a reload (re)configured it (0: in the config the run began with): a new instance has no server yet. */
  configuredAt: number;
  /** The daemon's last word on it; null when its last answer did not list it (a daemon still starting lists fewer). */
  status: Status | null;
  /** When the answer `status` comes from was asked for (null: none, or the last answer did not list it). */
  statusAt: number | null;
  /** No live server process since then (null: one is up). */
  downSince: number | null;
  downExcused: boolean;
  downReported: boolean;
  /** Server pids seen that were not the status pid, with when that was first seen. */
  mismatch: Map<number, number>;
  /** Time the last request that may start it (restart, update, rollback, daemon start, reload) was answered. */
  kickAt: number;
  /** When a status asked for after the last kick said stopped.* (null: not since). */
  stoppedSeenAt: number | null;
  /** When the server now up was first seen (null: none is). */
  upSince: number | null;
  /** The server pid the last /proc scan saw (null: none). */
  scanPid: number | null;
  /** Failures in a row with no run long enough to end the streak between them (never fewer than the daemon counts). */
  streak: number;
  /** Chat messages the loop rules allow so far: the sum over its faults and requests (bounds.ts). */
  chatAllowance: number;
  /** When a fault or a request last struck it (an environment fault's recovery check leaves such ones out). */
  touchedAt: number;
  /** When a stop it was asked for was taken (it is rightly down after that). */
  stopRequestedAt: number;
}

export interface Hang {
  key: string;
  pid: number;
  at: number;
  reported: boolean;
}

export interface Violation {
  at: number;
  invariant: Invariant;
  detail: string;
}

export interface SoakState {
  startedAt: number;
  run: string;
  dir: string;
  tracks: Map<string, Track>;
  hangs: Hang[];
  /** Set while a daemon answers; null while it is down or starting. */
  daemonReadyAt: number | null;
  /**
   * When the daemon of `ready` was first seen settled: every configured instance running the server it names, the
   * only server of its key, no orphan left (watch-procs.ts `settleAt`). Null until then; DAEMON_SETTLE_MS after
   * `ready` is the deadline that counts when it is never seen.
   */
  settled: { ready: number; at: number } | null;
  /** When the last status answer (GET /api/instances) was asked for; null before the first. */
  statusAt: number | null;
  daemonPid: number | null;
  /** Whether the daemon that answers runs with PersistServers (it adopts leftovers rather than shutting them down). */
  daemonPersists: boolean;
  /**
   * Until when the daemon's descriptor limit is lowered under it (descriptor-pressure): below its connection cap, so
   * the kernel resets connections it cannot accept. 0 when not.
   */
  starvedUntil: number;
  daemonUrl: string;
  faults: Map<FaultKind, number>;
  checks: Map<Invariant, number>;
  violations: Violation[];
  relaunchMs: number[];
  /** Each measured relaunch time less the back-off due for its place in the streak (ms). */
  relaunchExcessMs: number[];
  hangKillMs: number[];
  rss: Array<{ at: number; daemon: number; mb: number }>;
  /** The daemon's p99 per scrape, the idle reference's over the same window, and whether that one was starved. */
  lagP99: Array<{ at: number; ms: number; machine: number | null; wait: number; cpu: number; disturbed: boolean }>;
  /** The daemon's largest event-loop delay per scrape (ms): a single long block hides in a p99. */
  lagMaxMs: number[];
  /** How long each GET /api/instances took to answer (ms). */
  statusMs: number[];
  /** Children that outlived their server, with when that was first seen. */
  orphanChildren: Map<number, number>;
  /** Times bin/ was seen missing with bin.prev whole (between the install's two renames). */
  binSwapWindows: number;
  /** Fault kinds this machine cannot inject (a tmpfs that cannot be mounted), with why: reported, not hidden. */
  skipped: Map<FaultKind, string>;
  log: (line: string) => void;
}

export function newTrack(i: SoakInstance, now: number): Track {
  return {
    ...i,
    configured: true,
    configuredAt: now,
    status: null,
    statusAt: null,
    downSince: null,
    downExcused: false,
    downReported: false,
    mismatch: new Map(),
    kickAt: now,
    stoppedSeenAt: null,
    upSince: null,
    scanPid: null,
    streak: 0,
    chatAllowance: 0,
    touchedAt: now,
    stopRequestedAt: 0,
  };
}

/**
 * The server of `t` is gone (seen at `at`): one more failure in its streak, unless its run was long enough to have
 * ended the streak (STREAK_RESET_MS).
 */
export function serverDown(t: Track, at: number): void {
  if (t.upSince !== null && at - t.upSince >= STREAK_RESET_MS) t.streak = 0;
  t.streak++;
  t.upSince = null;
  t.downSince = at;
  t.downExcused = false;
  t.downReported = false;
}

export function check(s: SoakState, inv: Invariant, ok: boolean, detail: () => string): boolean {
  s.checks.set(inv, (s.checks.get(inv) ?? 0) + 1);
  if (!ok) {
    const v = { at: Date.now(), invariant: inv, detail: detail() };
    s.violations.push(v);
    s.log(`VIOLATION ${inv} at +${((v.at - s.startedAt) / 1000).toFixed(1)} s: ${v.detail}`);
  }
  return ok;
}

export function countFault(s: SoakState, kind: FaultKind, key?: string): void {
  s.faults.set(kind, (s.faults.get(kind) ?? 0) + 1);
  const t = key === undefined ? undefined : s.tracks.get(key);
  if (t) {
    t.chatAllowance += FAULT_MESSAGES[kind];
    t.touchedAt = Date.now();
  }
}

/** Marks that `key` (or every instance) was legitimately asked to run at `at`. */
export function kick(s: SoakState, at: number, key?: string): void {
  for (const t of s.tracks.values()) {
    if (key !== undefined && t.key !== key) continue;
    t.kickAt = Math.max(t.kickAt, at);
    t.stoppedSeenAt = null;
    // A request (or a daemon start) begins the counts anew.
    t.streak = 0;
    t.chatAllowance += KICK_MESSAGES;
    // A request on it strikes it; a daemon start does not (it must not fix what a fault left broken for good).
    if (key !== undefined) t.touchedAt = Math.max(t.touchedAt, at);
  }
}

export const since = (s: SoakState, at: number = Date.now()) => `+${((at - s.startedAt) / 1000).toFixed(1)} s`;
