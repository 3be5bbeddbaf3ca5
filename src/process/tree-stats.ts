import { readFileSync } from 'node:fs';
import { monotonicMs } from '../clock.ts';
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
 * How long one pass over every process in /proc says who belongs to whose tree. Each instance samples its server's
 * tree every few seconds, and a pass reads a file per process on the machine: shared, twenty instances on a host of
 * thousands of processes make one pass an interval instead of twenty. A member's own figures are read fresh; a
 * process started since the pass is counted from the next one.
 */
const PASS_REUSE_MS = 1_000;
const passes = new WeakMap<ProcSource, { at: number; entries: Map<number, ProcEntry> }>();

function pass(proc: ProcSource): Map<number, ProcEntry> {
  const last = passes.get(proc);
  if (last && monotonicMs() - last.at < PASS_REUSE_MS) return last.entries;
  const entries = new Map(proc.pids().flatMap((pid) => entryOf(proc, pid)));
  passes.set(proc, { at: monotonicMs(), entries });
  return entries;
}

const entryOf = (proc: ProcSource, pid: number): [number, ProcEntry][] => {
  const e = readEntry(proc, pid);
  return e === null ? [] : [[pid, e]];
};

/** A live process's stat, parsed; null when it has gone or is a zombie. */
function readEntry(proc: ProcSource, pid: number): ProcEntry | null {
  const text = proc.read(pid, 'stat');
  const e = text === null ? null : parseStat(pid, text);
  return e === null || e.state === 'Z' ? null : e;
}

/**
 * The memory and CPU time of a server and all it started: its process group, `alsoPids` (its cgroup's, which holds a
 * helper that double-forked away) and their descendants, found in a shared pass over /proc; null if it is gone or a
 * zombie.
 */
export function readTreeStats(
  rootPid: number,
  { proc = procfs, alsoPids = [] }: { proc?: ProcSource; alsoPids?: readonly number[] } = {},
): TreeStats | null {
  if (!Number.isInteger(rootPid) || rootPid <= 0) return null;
  const root = readEntry(proc, rootPid);
  if (root === null) return null;
  const shared = pass(proc);
  // A cgroup member started since the pass is read now.
  const late = alsoPids.filter((pid) => !shared.has(pid)).flatMap((pid) => entryOf(proc, pid));
  const entries = new Map([...shared, ...late, [rootPid, root]]);
  let rssBytes = 0;
  let ticks = 0;
  let processes = 0;
  for (const member of treeOf(root, entries, new Set(alsoPids))) {
    // Read again: the pass may be a moment old. One that went, or whose pid now names another process, counts for
    // nothing; so does one that went between the two reads.
    const now = member === root ? root : readEntry(proc, member.pid);
    const status = now === null || now.ppid !== member.ppid ? null : proc.read(member.pid, 'status');
    if (now === null || status === null) continue;
    // Kernel threads and zombies have no VmRSS line: no resident memory of their own.
    const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    rssBytes += rss?.[1] ? Number(rss[1]) * 1024 : 0;
    ticks += now.cpuTicks;
    processes++;
  }
  return { rssBytes, cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND, processes };
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
