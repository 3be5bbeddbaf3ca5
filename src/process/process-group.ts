/**
 * Signals the process group `pid` leads (spawned with `detached: true`, so its pid is the group id). ESRCH (nothing
 * left) is fine; if the group cannot be signalled, the leader alone is. Never throws.
 */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    try {
      process.kill(pid, signal);
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
export function reapStragglers(pid: number | undefined, detached: boolean): void {
  if (!detached) killGroup(pid, 'SIGKILL');
}
