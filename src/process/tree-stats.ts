import { readFileSync } from 'node:fs';
import { procPids, statFields } from './proc-info.ts';

/** USER_HZ, fixed at 100 on every architecture Linux supports (Node has no sysconf). */
export const CLOCK_TICKS_PER_SECOND = 100;

/** What the tree reader needs of /proc, so the arithmetic can be tested with a made-up one. */
export interface ProcSource {
  /** Every pid in /proc (empty when there is no /proc). */
  pids(): number[];
  /** The text of /proc/<pid>/<file>, or null when the process has gone. */
  read(pid: number, file: 'stat' | 'status'): string | null;
}

/** The real /proc, read synchronously: its files never wait for a disk, and a sync read costs a twentieth. */
const procfs: ProcSource = {
  pids: procPids,
  read(pid, file) {
    try {
      return readFileSync(`/proc/${pid}/${file}`, 'utf8');
    } catch {
      return null;
    }
  },
};

/**
 * `rssBytes`: the VmRSS of every process of the tree, summed. `cpuSeconds`: each live process's user and system time
 * plus that of the children it has reaped (cutime, cstime), so a helper that ran and exited still counts.
 */
export interface TreeStats {
  rssBytes: number;
  cpuSeconds: number;
  processes: number;
}

/** proc(5) fields 3 state, 4 ppid, 5 pgrp, 14-17 utime stime cutime cstime (index = field - 3). */
function parseStat(pid: number, text: string) {
  const f = statFields(text);
  const nums = [f[1], f[2], f[11], f[12], f[13], f[14]].map(Number);
  if (!f[0] || nums.some((n) => !Number.isFinite(n))) return null;
  const [ppid, pgid, utime, stime, cutime, cstime] = nums as [number, number, number, number, number, number];
  return { pid, ppid, pgid, state: f[0], cpuTicks: utime + stime + cutime + cstime };
}
type ProcEntry = NonNullable<ReturnType<typeof parseStat>>;

/**
 * The memory and CPU time of a server and all it started: its process group, `alsoPids` (its cgroup's, which holds a
 * helper that double-forked away) and their descendants, in one pass over /proc; null if it is gone or a zombie.
 */
export function readTreeStats(
  rootPid: number,
  { proc = procfs, alsoPids = [] }: { proc?: ProcSource; alsoPids?: readonly number[] } = {},
): TreeStats | null {
  if (!Number.isInteger(rootPid) || rootPid <= 0) return null;
  const rootText = proc.read(rootPid, 'stat');
  const root = rootText === null ? null : parseStat(rootPid, rootText);
  if (root === null || root.state === 'Z') return null;
  const entries = new Map<number, ProcEntry>([[rootPid, root]]);
  for (const pid of proc.pids()) {
    if (pid === rootPid) continue;
    const text = proc.read(pid, 'stat');
    const e = text === null ? null : parseStat(pid, text);
    if (e !== null && e.state !== 'Z') entries.set(pid, e);
  }
  const members = treeOf(root, entries, new Set(alsoPids));
  let rssBytes = 0;
  let ticks = 0;
  for (const e of members) {
    const status = proc.read(e.pid, 'status');
    // A process that went between the two reads counts for neither.
    if (status === null) continue;
    // Kernel threads and zombies have no VmRSS line: no resident memory of their own.
    const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    rssBytes += rss?.[1] ? Number(rss[1]) * 1024 : 0;
    ticks += e.cpuTicks;
  }
  return { rssBytes, cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND, processes: members.length };
}

/** The root, its process group, the extra pids, and the descendants of any of those. */
function treeOf(root: ProcEntry, entries: Map<number, ProcEntry>, also: Set<number>): ProcEntry[] {
  const children = new Map<number, ProcEntry[]>();
  for (const e of entries.values()) children.set(e.ppid, [...(children.get(e.ppid) ?? []), e]);
  const seen = new Set<number>();
  const queue = [root, ...[...entries.values()].filter((e) => e.pgid === root.pid || also.has(e.pid))];
  const out: ProcEntry[] = [];
  while (queue.length > 0) {
    const e = queue.shift() as ProcEntry;
    if (seen.has(e.pid)) continue;
    seen.add(e.pid);
    out.push(e);
    queue.push(...(children.get(e.pid) ?? []));
  }
  return out;
}
