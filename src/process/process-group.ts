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
 * When the leader exits, what is left of its group is killed at once (it would hold the game's ports against the next
 * launch), while the group id cannot have been reused. Not after `detach()`. A child that left the group is found by
 * process tracking.
 */
export function reapStragglers(pid: number | undefined, detached: boolean): void {
  if (!detached) killGroup(pid, 'SIGKILL');
}
