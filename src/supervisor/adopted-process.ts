import type { ServerProcess } from '../process/spawn.ts';

/**
 * A server left running by the previous daemon (PersistServers). It is not our child, so its exit is noticed by
 * polling, and its exit status is unknowable (reported as code null, signal null — "reason unavailable").
 * It was launched as its own process-group leader, so kills go to the group.
 */
export function adoptedProcess(pid: number, startTime: string | null, pollMs = 500): ServerProcess {
  let timer: NodeJS.Timeout | undefined;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const poll = () => {
      if (!alive()) {
        timer = undefined;
        resolve({ code: null, signal: null });
      } else timer = setTimeout(poll, pollMs);
    };
    poll();
  });
  return {
    pid,
    startTime,
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      try {
        process.kill(-pid, signal);
      } catch {
        try {
          process.kill(pid, signal);
        } catch {
          /* already gone */
        }
      }
    },
    detach() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
