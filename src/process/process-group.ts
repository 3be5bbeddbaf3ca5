import { setTimeout as sleep } from 'node:timers/promises';
import { monotonicMs } from '../clock.ts';

/** SIGKILLs one process; false when it is gone already. */
export function killPid(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `round` (kill what is there, resolve the pids it found) until it finds none or `timeoutMs` has passed (a
 * process forking as fast as it is killed cannot hold us for ever); resolves every pid found. Never throws.
 */
export async function killUntilGone(round: () => Promise<number[]>, timeoutMs: number): Promise<number[]> {
  const killed = new Set<number>();
  const deadline = monotonicMs() + timeoutMs;
  for (;;) {
    const pids = await round();
    for (const pid of pids) killed.add(pid);
    if (pids.length === 0 || monotonicMs() >= deadline) return [...killed];
    await sleep(20);
  }
}

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
