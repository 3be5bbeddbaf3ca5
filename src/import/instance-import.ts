import type { ResolvedInstance } from '../config/resolved.ts';
import { defaultInstanceData, type InstanceData, type LaunchData } from '../store/instance-data.ts';
import type { WatchdogDbRow } from '../store/watchdog-db.ts';
import { checkPersistedServer } from './persisted-server.ts';

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
