import { cgroupPids } from '../process/cgroup.ts';
import { readPlayers } from '../process/server-status.ts';
import { readTreeStats } from '../process/tree-stats.ts';
import type { MaintenancePolicy } from './contract.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { memoryOverLimit } from './memory-limit.ts';
import { ResourceSampler, type Sample } from './resource-sampler.ts';

/**
 * An instance's resource use: its server's process tree sampled every `Timing.ResourceSampleSeconds` (CPU, memory,
 * players), and `MemoryLimitMB` acted on once per run through the maintenance restart. `server` says which server
 * runs now; `requestRestart` is the maintenance's.
 */
export function createInstanceResources(
  deps: InstanceDeps,
  server: () => { pid: number; startedAt: number | null } | null,
  requestRestart: (when: MaintenancePolicy, why: string) => void,
  /** The current server has checked in: before that it is starting, and its memory says nothing yet. */
  checkedIn: () => boolean,
) {
  const sampleMs = () => deps.config.timing.ResourceSampleSeconds * 1000;
  /** The launch cgroup of the server with this pid (cgroup tracking), whose every process counts as the server's. */
  let launchCgroup: { pid: number; cgroup: string | null } | null = null;
  /** The server asked to restart for its memory: once per run. */
  let memoryRestartPid: number | null = null;
  let sampledPid: number | null = null;

  /** Past `MemoryLimitMB`: ask the server to leave for a restart by its `Maintenance.When`, with why. */
  const checkMemory = (sample: Sample) => {
    const why = memoryOverLimit(sample.rssBytes, deps.instance.settings.MemoryLimitMB);
    if (why === null || memoryRestartPid === sample.pid || !checkedIn()) return;
    memoryRestartPid = sample.pid;
    const when = deps.instance.settings.Maintenance?.When ?? 'RoundEnd';
    deps.log.warn(`${why}; restarting it (${when})`, { pid: sample.pid });
    requestRestart(when, why);
  };

  const sampler = new ResourceSampler({
    server,
    readTree: async (pid) => {
      const cgroup = launchCgroup?.pid === pid ? launchCgroup.cgroup : null;
      return readTreeStats(pid, { alsoPids: cgroup === null ? [] : await cgroupPids(cgroup) });
    },
    // Not longer than the interval: a server too busy to answer is "unknown" this time, not a backlog of reads.
    readPlayers: () => readPlayers(deps.instance.settings.ApiPort, Math.min(2000, sampleMs())),
    intervalMs: sampleMs,
    onSample: checkMemory,
  });

  return {
    /** The process host's word on a launch: its pid and cgroup. */
    launched(pid: number, cgroup: string | null): void {
      launchCgroup = { pid, cgroup };
    },
    /** The machine's current pid: a new server is sampled at once. */
    pidSeen(pid: number | null): void {
      if (pid === sampledPid) return;
      sampledPid = pid;
      if (pid !== null) sampler.wake();
    },
    resources: (pid: number | null) => sampler.resources(pid),
    players: (pid: number | null) => sampler.playerCount(pid),
    stop: () => sampler.stop(),
  };
}
