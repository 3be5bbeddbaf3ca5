import { readFile } from 'node:fs/promises';
import { statFields } from '../process/proc-info.ts';

export interface ProcessStats {
  /** Resident set size in bytes (`VmRSS` of /proc/<pid>/status). */
  rssBytes: number;
  /** User plus system CPU time in seconds (`utime` + `stime` of /proc/<pid>/stat). */
  cpuSeconds: number;
}

/**
 * Clock ticks per second of the time fields in /proc/<pid>/stat. It is USER_HZ, which the kernel fixes at 100
 * for its user ABI on every architecture Linux supports today (proc(5): "measured in clock ticks (divide by
 * sysconf(_SC_CLK_TCK))"); Node has no sysconf, and spawning `getconf` per scrape would cost more than it checks.
 */
export const CLOCK_TICKS_PER_SECOND = 100;

/**
 * A process's memory and CPU time from /proc, or null when it has gone, is a zombie, or this is not Linux.
 * RSS comes from /proc/<pid>/status in kB rather than statm's pages, so the page size need not be known.
 */
export async function readProcessStats(pid: number): Promise<ProcessStats | null> {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const [stat, status] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
    ]);
    const f = statFields(stat);
    // proc(5) field 14 utime and 15 stime → indexes 11 and 12.
    const utime = Number(f[11]);
    const stime = Number(f[12]);
    const rss = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    if (f[0] === 'Z' || !rss?.[1] || !Number.isFinite(utime) || !Number.isFinite(stime)) return null;
    return { rssBytes: Number(rss[1]) * 1024, cpuSeconds: (utime + stime) / CLOCK_TICKS_PER_SECOND };
  } catch {
    return null;
  }
}
