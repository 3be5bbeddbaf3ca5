import { TIMING } from './config.ts';
import type { FaultKind } from './state.ts';

/**
 * The bounds the invariants hold the daemon to, computed from the Timing the soak configures and the loop rules
 * the README states, each with a slack for a loaded two-core machine (scans run every 500 ms, a Node server takes
 * a few hundred ms to exec). The soak derives them on its own rather than importing the daemon's code: an oracle
 * that shares the code it checks cannot catch that code's mistakes.
 */
const SLACK_MS = 3000;

/**
 * The back-off before relaunch number `streak` of a crash streak (README "How it behaves"): the first failure
 * relaunches at once, the second waits BackoffInitialSeconds, each later one twice the one before, capped at
 * BackoffMaxSeconds.
 */
export const backoffMs = (streak: number): number =>
  streak < 2 ? 0 : Math.min(TIMING.BackoffInitialSeconds * 1000 * 2 ** (streak - 2), TIMING.BackoffMaxSeconds * 1000);

/** A server's end to the next launch: the back-off for its place in the streak, plus the slack. */
export const relaunchBoundMs = (streak: number): number => backoffMs(streak) + SLACK_MS;

/**
 * A run at least this long (from its exec) certainly ended its streak: the daemon forgets a streak StableRunSeconds
 * after the first check-in, and asks again after as long when the check-ins were overdue then (a thawed freeze).
 * Three periods cover a slow start and one such second ask; a shorter run keeps the soak's count going, so the
 * bound it gives is never shorter than the daemon's.
 */
export const STREAK_RESET_MS = 3 * TIMING.StableRunSeconds * 1000;

/** A frozen server to its kill: its TimeoutSeconds from the last check-in (≤ the freeze), plus the slack. */
export const hangBoundMs = (timeoutSeconds: number) => timeoutSeconds * 1000 + SLACK_MS;

/**
 * How long a server may live while the daemon names another pid (or none) for its instance: a graceful shutdown
 * (request + exit windows), the machine's 2 s net under it, and the slack.
 */
export const ORPHAN_GRACE_MS = (TIMING.ShutdownRequestSeconds + TIMING.ShutdownExitSeconds + 2) * 1000 + SLACK_MS;

/** After a daemon answers /health: adoption, leftover shutdowns and first launches settle within this. */
export const DAEMON_SETTLE_MS = ORPHAN_GRACE_MS;

/**
 * Chat messages a fault may bring on its instance, by the loop rules (README "How it behaves"): an unclean end after a check-in is told once, as a crash at the start of a streak or as the
 * loop at its second failure, and not after; a hang is told when it is the first of its loop, and its kill may
 * also be the second failure (2); launches that fail before a check-in are told once, when the daemon gives up.
 * A mode fault kills the running server (one failure) and then sets how the next launches behave: a crash-loop
 * adds the loop message, exit-at-start, slow-start and old-secret a give-up. Update faults, control traffic as such
 * and webhook faults tell nothing of their own: what a request brings (an update installed or failed, a stop) is
 * the request's allowance (KICK_MESSAGES).
 */
export const FAULT_MESSAGES: Record<FaultKind, number> = {
  'sigkill-server': 1,
  'sigstop-sigcont': 2,
  'sigstop-hang': 2,
  'exit-at-start': 2,
  'crash-loop': 2,
  'ignore-shutdown': 1,
  'slow-start': 2,
  fork: 1,
  'old-secret': 2,
  'control-burst': 0,
  'control-same-moment': 0,
  'daemon-kill-persist': 0,
  'daemon-kill-no-persist': 0,
  'config-reload': 0,
  'update-ok': 0,
  'update-truncate': 0,
  'update-wrong-hash': 0,
  'update-stall': 0,
  'update-cdn-down': 0,
  'webhook-429': 0,
  'webhook-500': 0,
  'webhook-silent': 0,
  // Environment faults (faults-env.ts, faults-env-daemon.ts), each instance they strike (the daemon-wide ones: every
  // instance running then) may crash, loop and give up once (3); a flood and a refused second daemon tell nothing.
  'disk-full': 3,
  'logs-removed': 3,
  // The log write failing, then written again: one notice each.
  'fifo-log': 2,
  // Relaunched (a kill: one crash notice) into a server whose /status never ends.
  'endless-status': 3,
  // Each kills the server it strikes (one crash notice), which may then loop and give up like any environment fault.
  'fifo-config': 3,
  'fifo-shared': 3,
  'endless-hub': 3,
  // An update's messages are the request's (KICK_MESSAGES).
  'endless-cdn': 0,
  // The server frozen after the step, as sigstop-hang.
  'clock-step': 2,
  'request-flood': 0,
  'descriptor-pressure': 3,
  'escaping-helper': 3,
  'second-daemon': 0,
};

/**
 * What a request that may start or stop an instance (a control request, a daemon start, a reload) may bring: a
 * stop is told once; an update it finds is told as its maintenance begins and ends and as installed or failed
 * (three; a start also checks for one); a start resets the counts, so launches that still misbehave may give up
 * once more (no more than the update's three: the give-up ends the run the update began).
 */
export const KICK_MESSAGES = 3;
