import { randomBytes } from 'node:crypto';
import { environVar, isAlive, procPids } from './proc-info.ts';
import { killPid, killUntilGone } from './process-group.ts';

/**
 * The environment variable every launch carries: `<daemon folder id>/<instance key>/<launch id>`. Every process the
 * server starts inherits it (whatever session or group it moves to), so where there is no cgroup a launch's
 * leftovers are found by it. Not a secret: it only says whose process it is.
 */
export const MARKER_ENV = 'WATCHDOG_LAUNCH';

/** What marks the processes of one instance (`<daemon id>/<key>/`); a launch's marker starts with it. */
export function instanceMarker(daemonId: string, key: string): string {
  return `${daemonId}/${key}/`;
}

export function newLaunchMarker(daemonId: string, key: string): string {
  return `${instanceMarker(daemonId, key)}${randomBytes(6).toString('hex')}`;
}

export async function markerOf(pid: number): Promise<string | null> {
  return (await environVar(pid, MARKER_ENV)) ?? null;
}

/**
 * The live processes whose marker starts with `prefix` (a launch's whole marker, or an instance's), this daemon
 * excepted (it may have been started from a shell that carries one). Empty without /proc.
 */
export async function findMarked(prefix: string): Promise<number[]> {
  const pids = procPids().filter((pid) => pid !== process.pid);
  const found: number[] = [];
  // Several reads in flight at once: this runs on the way to a relaunch, and one read after another waits a turn
  // of a busy event loop and thread pool each.
  let next = 0;
  const worker = async () => {
    while (next < pids.length) {
      const pid = pids[next++] as number;
      const marker = await markerOf(pid);
      if (marker?.startsWith(prefix) && isAlive(pid)) found.push(pid);
    }
  };
  await Promise.all(Array.from({ length: SCAN_PARALLEL }, worker));
  return found.sort((a, b) => a - b);
}

/** How many /proc/<pid>/environ reads a scan keeps in flight. */
const SCAN_PARALLEL = 8;

/** SIGKILLs every process marked with `prefix` until none is left (`killUntilGone`); the pids killed. */
export const killMarked = (prefix: string, timeoutMs: number): Promise<number[]> =>
  killUntilGone(async () => (await findMarked(prefix)).filter(killPid), timeoutMs);
