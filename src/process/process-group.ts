import type { ChildProcess } from 'node:child_process';

/**
 * Signals the process group the server leads (it was spawned with `detached: true`, so its pid is the
 * group id). ESRCH (nothing left) is fine; if the group cannot be signalled, the leader alone is.
 */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    try {
      child.kill(signal);
    } catch {
      // Nothing left to signal.
    }
  }
}

/**
 * When the leader exits, what is left of its group (children it did not take down) is killed at once: they would
 * hold the game's ports and files against the next launch. Done immediately, while the group id cannot have been
 * reused. Not after `detach()`. This reaches only the group: a child that moved to a session or group of its own is
 * found by process tracking (`tracking.ts`: the launch's cgroup, or its environment marker).
 */
export function reapStragglers(child: ChildProcess, detached: boolean): void {
  if (!detached) killGroup(child, 'SIGKILL');
}
