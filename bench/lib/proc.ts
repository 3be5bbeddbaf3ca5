import { readFileSync, writeFileSync } from 'node:fs';

/** Linux /proc readings of one process; every reader returns null once the process is gone. */

export interface MemoryReading {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size (VmHWM), bytes. */
  hwm: number;
  /** Of rss: anonymous memory (heaps, buffers) and file-backed pages (code, mapped files), bytes. */
  anon: number;
  file: number;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** VmRSS and VmHWM from /proc/<pid>/status. */
export function readMemory(pid: number): MemoryReading | null {
  const text = readText(`/proc/${pid}/status`);
  if (text === null) return null;
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  const rss = kb('VmRSS');
  const hwm = kb('VmHWM');
  return Number.isFinite(rss) && Number.isFinite(hwm) ? { rss, hwm, anon: kb('RssAnon'), file: kb('RssFile') } : null;
}

/**
 * Resets VmHWM to the current RSS (writing 5 to clear_refs, Linux ≥ 4.0), so a later VmHWM is the peak of what
 * follows. False when the kernel refuses (then callers fall back to sampling VmRSS).
 */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Clock ticks per second for /proc/<pid>/stat times; 100 on every Linux this runs on (USER_HZ). */
export const CLK_TCK = 100;

/** utime + stime of the process (its own threads, not its children), in clock ticks. */
export function readCpuTicks(pid: number): number | null {
  const text = readText(`/proc/${pid}/stat`);
  if (text === null) return null;
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : null;
}

/** The process state letter (R, S, T for stopped, Z for zombie), or null when it is gone. */
export function readState(pid: number): string | null {
  const text = readText(`/proc/${pid}/stat`);
  return text === null ? null : (text.slice(text.lastIndexOf(')') + 2).split(' ')[0] ?? null);
}

/** True while the pid names a live, non-zombie process. */
export function isAlive(pid: number): boolean {
  const state = readState(pid);
  return state !== null && state !== 'Z' && state !== 'X';
}

/** One variable of /proc/<pid>/environ (the bench reads the check-in secret of a server it started this way). */
export function readEnvironVar(pid: number, name: string): string | null {
  let raw: Buffer;
  try {
    raw = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
  for (const entry of raw.toString('utf8').split('\0')) {
    if (entry.startsWith(`${name}=`)) return entry.slice(name.length + 1);
  }
  return null;
}

/** Sends a signal to a pid the bench started (directly or through a supervisor it started); never throws. */
export function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
