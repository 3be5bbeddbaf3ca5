import { monotonicMs } from '../clock.ts';
import { answerCap } from '../config/sections/answers.ts';
import { cgroupPids } from '../process/cgroup.ts';
import { readPlayers } from '../process/server-api.ts';
import { readTreeStats, type TreeStats } from '../process/tree-stats.ts';
import { formatBytes } from '../store/disk-space.ts';
import type { MaintenancePolicy } from './contract.ts';
import type { InstanceDeps } from './instance-deps.ts';
import type { ResourceStatus } from './status.ts';

export interface Sample {
  pid: number;
  /** Monotonic, so a step of the wall clock cannot skew the CPU %. */
  at: number;
  /** The tree's CPU time as read. */
  readSeconds: number;
  /** CPU time counted for this run so far: never goes down, although the tree's own sum does when a child goes. */
  cpuSeconds: number;
  cpuPercent: number;
  rssBytes: number;
  processes: number;
}

/** CPU in % of one core since the same server's previous sample or its launch; a falling sum counts 0. */
export function nextSample(
  prev: Sample | null,
  pid: number,
  read: TreeStats,
  at: number,
  startedAt: number | null,
): Sample {
  const same = prev !== null && prev.pid === pid;
  const since = same ? prev.at : (startedAt ?? at);
  const gained = same ? Math.max(0, read.cpuSeconds - prev.readSeconds) : read.cpuSeconds;
  const seconds = (at - since) / 1000;
  return {
    pid,
    at,
    readSeconds: read.cpuSeconds,
    cpuSeconds: (same ? prev.cpuSeconds : 0) + gained,
    cpuPercent: seconds > 0 ? Math.round((gained / seconds) * 1000) / 10 : 0,
    rssBytes: read.rssBytes,
    processes: read.processes,
  };
}

/** Why a server's memory calls for a restart (`memory 2.1 GB over MemoryLimitMB 2048`), or null; decimal MB. */
export function memoryOverLimit(rssBytes: number, limitMB: number | undefined): string | null {
  if (limitMB === undefined || rssBytes <= limitMB * 1_000_000) return null;
  return `memory ${formatBytes(rssBytes)} over MemoryLimitMB ${limitMB}`;
}

/** The player count, not awaited past `intervalMs`: a server too busy to answer is unknown, not a backlog of reads. */
export function readPlayersWithin(deps: InstanceDeps, intervalMs: number): Promise<number | null> {
  const cap = answerCap(deps.config.settings.Answers, 'Server');
  return readPlayers(deps.instance.settings.ApiPort, { ...cap, timeoutMs: Math.min(cap.timeoutMs, intervalMs) });
}

/** The server's tree and players, read every `Timing.ResourceSampleSeconds` while it runs; `MemoryLimitMB` once. */
export function createInstanceResources(
  deps: InstanceDeps,
  server: () => { pid: number; startedMs: number | null } | null,
  requestRestart: (when: MaintenancePolicy, why: string) => void,
  /** Before its first check-in a server's memory says nothing yet. */
  checkedIn: () => boolean,
) {
  const sampleMs = () => deps.config.timing.ResourceSampleSeconds * 1000;
  let launchCgroup: { pid: number; cgroup: string | null } | null = null;
  let memoryRestartPid: number | null = null;
  let sampledPid: number | null = null;
  let last: (Sample & { takenAt: number }) | null = null;
  let players: { pid: number; count: number | null } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let busy = false;
  let stopped = false;

  const checkMemory = (sample: Sample) => {
    const why = memoryOverLimit(sample.rssBytes, deps.instance.settings.MemoryLimitMB);
    if (why === null || memoryRestartPid === sample.pid || !checkedIn()) return;
    memoryRestartPid = sample.pid;
    const when = deps.instance.settings.Maintenance?.When ?? 'RoundEnd';
    deps.log.warn(`${why}; restarting it (${when})`, { pid: sample.pid });
    requestRestart(when, why);
  };

  const readTree = async (pid: number) => {
    const cgroup = launchCgroup?.pid === pid ? launchCgroup.cgroup : null;
    return readTreeStats(pid, { alsoPids: cgroup === null ? [] : await cgroupPids(cgroup) });
  };

  async function tick(): Promise<void> {
    timer = null;
    const now = server();
    if (now === null) {
      last = null;
      players = null;
      return;
    }
    busy = true;
    try {
      const [tree, count] = await Promise.all([readTree(now.pid), readPlayersWithin(deps, sampleMs())]);
      // The server may have changed while /proc was read: keep only what belongs to the one running now.
      if (server()?.pid !== now.pid) return;
      last =
        tree === null
          ? null
          : { ...nextSample(last, now.pid, tree, monotonicMs(), now.startedMs), takenAt: Date.now() };
      players = { pid: now.pid, count };
      if (last !== null) checkMemory(last);
    } finally {
      busy = false;
      if (!stopped) {
        timer = setTimeout(() => void tick(), Math.max(250, sampleMs()));
        timer.unref();
      }
    }
  }

  return {
    launched(pid: number, cgroup: string | null): void {
      launchCgroup = { pid, cgroup };
    },
    /** A new server is sampled at once, and then every interval until it has gone. */
    pidSeen(pid: number | null): void {
      if (pid === sampledPid) return;
      sampledPid = pid;
      if (pid !== null && !stopped && timer === null && !busy) void tick();
    },
    resources(pid: number | null): ResourceStatus | null {
      if (last === null || last.pid !== pid) return null;
      const { cpuPercent, cpuSeconds, rssBytes, processes, takenAt } = last;
      const cpu = Math.round(cpuSeconds * 100) / 100;
      return { cpuPercent, cpuSeconds: cpu, rssBytes, processes, at: new Date(takenAt).toISOString() };
    },
    players: (pid: number | null): number | null => (players !== null && players.pid === pid ? players.count : null),
    stop(): void {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}

export type InstanceResources = ReturnType<typeof createInstanceResources>;
