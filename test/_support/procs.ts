/** Process checks and cleanup shared by the suites that run real servers (e2e, peer). */

/** Whether `pid` exists (a zombie, dead but not reaped yet, still does). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILLs a server's whole process group (it leads one) and the pid itself, for cleanup of servers left running. */
export function killGroup(pid: number | null | undefined): void {
  if (!pid) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* gone, or not a group leader */
    }
  }
}
