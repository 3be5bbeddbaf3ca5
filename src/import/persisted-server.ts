import { readFile, readlink, realpath } from 'node:fs/promises';
import { isAlive, readCmdline, readProcessStartTime } from '../process/proc-info.ts';

/** A running process verified to be the instance's server, as far as /proc can tell. */
export interface PersistedServer {
  pid: number;
  /** As `readProcessStartTime` gives it, so the usual adoption check (findLeftover) recognises it. */
  startTime: string;
  /** The arguments after the program in its command line (where `watchdog.baseUrl` is read from). */
  args: string[];
  /** When it started, from its start time and the system's uptime. */
  startedAt: string;
}

export type PersistedServerCheck = { ok: true; server: PersistedServer } | { ok: false; reason: string };

/** `<ticks>@<boot id>` → ticks, when both start times are from this boot; else null. */
function ticksThisBoot(startTime: string, reference: string): bigint | null {
  const [ticks, boot] = startTime.split('@');
  const [, refBoot] = reference.split('@');
  if (!ticks || !/^\d+$/.test(ticks) || boot !== refBoot) return null;
  return BigInt(ticks);
}

/** Clock ticks per second of /proc/<pid>/stat's start time: USER_HZ, 100 on every Linux that matters. */
const USER_HZ = 100;

async function startedAt(ticks: bigint): Promise<string> {
  const uptime = Number.parseFloat(await readFile('/proc/uptime', 'utf8').catch(() => ''));
  if (!Number.isFinite(uptime)) return new Date().toISOString();
  return new Date(Date.now() - (uptime - Number(ticks) / USER_HZ) * 1000).toISOString();
}

/**
 * Whether `pid` is the server the real watchdog left running: alive, started before `before` (this process's start:
 * a later one cannot be the old daemon's), and running `program`, as its executable or, unlike the real watchdog,
 * as argv[0] or argv[1] (a script run by an interpreter), links resolved. Reads /proc only, never signals.
 */
export async function checkPersistedServer(
  pid: number,
  program: string,
  before: string,
): Promise<PersistedServerCheck> {
  if (!isAlive(pid)) return { ok: false, reason: 'no process has that pid any more' };
  const [startTime, cmdline, exe] = await Promise.all([
    readProcessStartTime(pid),
    readCmdline(pid),
    readlink(`/proc/${pid}/exe`).catch(() => null),
  ]);
  if (startTime === null || cmdline === null)
    return { ok: false, reason: 'its start time and command line cannot be read in /proc' };
  const names = new Set([program, await realpath(program).catch(() => program)]);
  // A build replaced while its server runs shows as "<path> (deleted)"; it is still the program that was started.
  const exePath = exe?.replace(/ \(deleted\)$/, '') ?? null;
  let at: number;
  if (exePath !== null && names.has(exePath)) at = 0;
  else if (cmdline[0] !== undefined && names.has(cmdline[0])) at = 0;
  else if (cmdline[1] !== undefined && names.has(cmdline[1])) at = 1;
  else {
    return {
      ok: false,
      reason: `it runs ${exePath ?? cmdline[0] ?? '(unknown)'}, not the instance's program ${program}`,
    };
  }
  const ticks = ticksThisBoot(startTime, before);
  const limit = ticksThisBoot(before, before);
  if (ticks === null || limit === null || ticks >= limit) {
    return { ok: false, reason: 'it started after this watchdog did, so the old watchdog did not leave it' };
  }
  return { ok: true, server: { pid, startTime, args: cmdline.slice(at + 1), startedAt: await startedAt(ticks) } };
}
