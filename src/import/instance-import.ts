import type { ResolvedInstance } from '../config/resolved.ts';
import { defaultInstanceData, type InstanceData, type LaunchData } from '../store/instance-data.ts';
import type { WatchdogDbRow } from '../store/watchdog-db.ts';
import { checkPersistedServer } from './persisted-server.ts';

/** What the real watchdog's data.db holds for one instance, and what becomes of the server it left running. */
export interface InstanceImport {
  key: string;
  revision: string | null;
  persistedPid: number | null;
  systemdUnit: string | null;
  /**
   * `adopt`: the persisted pid is the instance's server and PersistServers is on. `shut-down`: it is, but
   * PersistServers is off, so it is shut down gracefully before the new launch (else it would hold the port).
   * `none`: no server to take over (`reason` says why when a pid was persisted).
   */
  server: 'adopt' | 'shut-down' | 'none';
  /** The launch record handed to the adoption path: the verified server and its persisted check-in secret. */
  launch: LaunchData | null;
  /** Why a persisted pid is not taken. */
  reason: string | null;
}

/**
 * Looks at the server a data.db row names: verified (see checkPersistedServer) it becomes a launch record with
 * the persisted secret, for adoption or, with PersistServers off, for a graceful shutdown. Signals nothing.
 * `before` is this process's start time.
 */
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

/** The data.json an import writes: the revision for the current UpdateType, and the server found (if any). */
export function importedData(found: InstanceImport, updateType: string | null): InstanceData {
  return { ...defaultInstanceData(updateType), revision: found.revision, launch: found.launch };
}

/** One sentence on what happens to the persisted server, for the daemon log and `watchdog import`. */
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

/** The warning for a server the real watchdog ran as a systemd unit, which we do not adopt. */
export function describeSystemdUnit(unit: string): string {
  return (
    `the real watchdog ran this server as systemd unit ${unit}, which is not adopted (Process.Mode Systemd is not supported); ` +
    `stop it (systemctl stop ${unit}) if it still runs, or it keeps the server's port`
  );
}
