import { readFile, readlink, realpath } from 'node:fs/promises';
import type { ResolvedInstance } from '../config/resolved.ts';
import { isAlive, readCmdline, readProcessStartTime } from '../process/proc-info.ts';
import { CLOCK_TICKS_PER_SECOND } from '../process/tree-stats.ts';
import { defaultInstanceData, type InstanceData, type LaunchData } from '../store/instance-data.ts';
import type { WatchdogDbRow } from '../store/watchdog-db.ts';

/** An instance's row of data.db and what becomes of its server (`shut-down`: it would hold the port). */
export interface InstanceImport {
  key: string;
  revision: string | null;
  persistedPid: number | null;
  systemdUnit: string | null;
  server: 'adopt' | 'shut-down' | 'none';
  launch: LaunchData | null;
  reason: string | null;
}

/** The server a row names, verified (checkPersistedServer), as a launch record with its secret; signals nothing. */
export async function inspectRow(
  row: WatchdogDbRow,
  instance: ResolvedInstance,
  opts: { persistServers: boolean; before: string },
): Promise<InstanceImport> {
  const base = {
    key: instance.key,
    revision: row.revision,
    persistedPid: row.persistedPid,
    systemdUnit: row.persistedSystemdUnit,
  };
  const none = (reason: string | null): InstanceImport => ({ ...base, server: 'none', launch: null, reason });
  if (row.persistedPid === null) return none(null);
  const check = await checkPersistedServer(row.persistedPid, instance.program, opts.before);
  if (!check.ok) return none(check.reason);
  // The real watchdog writes the token before every launch, so this needs a hand-edited file.
  if (row.persistedToken === null)
    return none('it runs, but no check-in secret was persisted with it; stop it yourself');
  const { pid, startTime, args, startedAt: launchedAt } = check.server;
  return {
    ...base,
    server: opts.persistServers ? 'adopt' : 'shut-down',
    launch: { pid, startTime, program: instance.program, args, secret: row.persistedToken, launchedAt },
    reason: null,
  };
}

export function importedData(found: InstanceImport, updateType: string | null): InstanceData {
  return { ...defaultInstanceData(updateType), revision: found.revision, launch: found.launch };
}

export function describeServer(found: InstanceImport): string {
  const pid = found.persistedPid;
  switch (found.server) {
    case 'adopt':
      return `its server (pid ${pid}) is running and is adopted`;
    case 'shut-down':
      return `its server (pid ${pid}) is running; Process.PersistServers is off, so it is shut down gracefully before a new one launches`;
    case 'none':
      return pid === null
        ? 'no server pid was persisted'
        : `the persisted pid ${pid} is not adopted: ${found.reason ?? 'unknown'}`;
  }
}

export function describeSystemdUnit(unit: string): string {
  return (
    `the real watchdog ran this server as systemd unit ${unit}, which is not adopted (Process.Mode Systemd is not supported); ` +
    `stop it (systemctl stop ${unit}) if it still runs, or it keeps the server's port`
  );
}

/** `startTime` as `readProcessStartTime` gives it, for the usual adoption check; `args` after the program. */
type PersistedServerCheck =
  | { ok: true; server: { pid: number; startTime: string; args: string[]; startedAt: string } }
  | { ok: false; reason: string };

/** `<ticks>@<boot id>` → ticks, when both start times are from this boot; else null. */
function ticksThisBoot(startTime: string, reference: string): bigint | null {
  const [ticks, boot] = startTime.split('@');
  const [, refBoot] = reference.split('@');
  if (!ticks || !/^\d+$/.test(ticks) || boot !== refBoot) return null;
  return BigInt(ticks);
}

async function startedAt(ticks: bigint): Promise<string> {
  const uptime = Number.parseFloat(await readFile('/proc/uptime', 'utf8').catch(() => ''));
  if (!Number.isFinite(uptime)) return new Date().toISOString();
  return new Date(Date.now() - (uptime - Number(ticks) / CLOCK_TICKS_PER_SECOND) * 1000).toISOString();
}

/**
 * Whether `pid` is the server the real watchdog left: alive, started before `before` (this process), and running
 * `program` as its executable or (unlike the original) argv[0] or argv[1], links resolved. Reads /proc only.
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
  // A build replaced while its server runs shows as "<path> (deleted)".
  const exePath = exe?.replace(/ \(deleted\)$/, '') ?? null;
  const named = (path: string | null | undefined) => path != null && names.has(path);
  const at = named(exePath) || named(cmdline[0]) ? 0 : named(cmdline[1]) ? 1 : -1;
  if (at < 0) {
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
