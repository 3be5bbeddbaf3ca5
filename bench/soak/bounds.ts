import { TIMING } from './config.ts';

/**
 * The bounds the invariants hold the daemon to, computed from the Timing the soak configures, each with a slack
 * for a loaded two-core machine (scans run every 500 ms, a Node server takes a few hundred ms to exec).
 */
const SLACK_MS = 3000;

/** A crash (or a hang kill) to the next launch: at most one full back-off, plus the slack. */
export const RELAUNCH_BOUND_MS = TIMING.BackoffMaxSeconds * 1000 + SLACK_MS;

/** A frozen server to its kill: its TimeoutSeconds from the last check-in (≤ the freeze), plus the slack. */
export const hangBoundMs = (timeoutSeconds: number) => timeoutSeconds * 1000 + SLACK_MS;

/**
 * How long a server may live while the daemon names another pid (or none) for its instance: a graceful shutdown
 * (request + exit windows), the machine's 2 s net under it, and the slack.
 */
export const ORPHAN_GRACE_MS = (TIMING.ShutdownRequestSeconds + TIMING.ShutdownExitSeconds + 2) * 1000 + SLACK_MS;

/** After a daemon answers /health: adoption, leftover shutdowns and first launches settle within this. */
export const DAEMON_SETTLE_MS = ORPHAN_GRACE_MS;

/** Chat messages one episode (a fault, an accepted request, a daemon start, a reload) may bring on one instance. */
export const MESSAGES_PER_EPISODE = 3;
