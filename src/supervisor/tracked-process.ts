import type { Logger } from '../log.ts';
import type { ServerProcess } from '../process/spawn.ts';
import type { LaunchTrack, ProcessTracking } from '../process/tracking.ts';

/**
 * A server process whose whole launch goes with it: once the server has exited, every process it left (in its
 * cgroup, or carrying its marker, whatever group or session it moved to) is killed before the exit is reported, so
 * the next launch never meets them on the game port. A SIGKILL takes the launch's cgroup at once. Not after
 * `detach()`: a detached server and its helpers are the next daemon's (PersistServers).
 */
export function trackedProcess(
  proc: ServerProcess,
  track: LaunchTrack,
  tracking: ProcessTracking,
  log: Logger,
  /** Told the pids killed after the exit (the bus's `instance:stragglers`). */
  report: (pids: number[]) => void,
): ServerProcess {
  let detached = false;
  const exited = proc.exited.then(async (status) => {
    if (detached) return status;
    const killed = await tracking.end(track).catch(() => []);
    if (killed.length > 0) {
      log.warn(`killed ${killed.length} process(es) the server left behind when it exited`, {
        pid: proc.pid,
        pids: killed.join(' '),
      });
      report(killed);
    }
    return status;
  });
  return {
    pid: proc.pid,
    startTime: proc.startTime,
    exited,
    kill(signal = 'SIGKILL') {
      proc.kill(signal);
      if (signal === 'SIGKILL' && !detached) tracking.killNow(track);
    },
    detach() {
      detached = true;
      proc.detach();
    },
  };
}
