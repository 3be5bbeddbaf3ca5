import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The two ways an engine (space-station-14 style) repository packages itself, as the real watchdog runs them
 * (its `UpdateProviderGit.cs`): the `Content.Packaging` project with `dotnet`, or, in repositories older than it, the
 * `Tools/package_server_build.py` and `Tools/package_client_build.py` scripts. Both leave
 * `release/SS14.Server_<rid>.zip` and, for a non-hybrid build, `release/SS14.Client.zip` in the repository.
 */

export interface BuildStep {
  what: string;
  program: string;
  args: string[];
}

export type EngineKind = 'packaging' | 'python';

export const SERVER_SCRIPT = 'Tools/package_server_build.py';
export const CLIENT_SCRIPT = 'Tools/package_client_build.py';

/**
 * The real watchdog runs `python`, but Debian and Ubuntu ship only `python3` unless python-is-python3 is installed,
 * and the engine's scripts themselves start with `#!/usr/bin/env python3`; so `python3`, except on Windows, where
 * the python.org installer provides `python` and `python3` is often only the Microsoft Store placeholder.
 */
export const PYTHON = process.platform === 'win32' ? 'python' : 'python3';

/**
 * For both kinds (the python scripts run `dotnet` too): no telemetry, and no MSBuild worker nodes left running
 * (they would hold the build log's pipes open); python unbuffered so its output reaches the build log as it comes.
 */
export const ENGINE_ENV: Record<string, string> = {
  DOTNET_CLI_TELEMETRY_OPTOUT: '1',
  DOTNET_NOLOGO: '1',
  MSBUILDDISABLENODEREUSE: '1',
  PYTHONUNBUFFERED: '1',
};

const isDir = async (path: string) => (await stat(path).catch(() => null))?.isDirectory() ?? false;
const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() ?? false;

/** Which engine packaging the checkout has, `Content.Packaging` first as in the real watchdog; null for neither. */
export async function detectEngine(sourceDir: string): Promise<EngineKind | null> {
  if (await isDir(join(sourceDir, 'Content.Packaging'))) return 'packaging';
  if (await isFile(join(sourceDir, SERVER_SCRIPT))) return 'python';
  return null;
}

/** Whether the checkout has the client script a non-hybrid python build needs. */
export const hasClientScript = (sourceDir: string): Promise<boolean> => isFile(join(sourceDir, CLIENT_SCRIPT));

/** The engine's packaging commands (Content.Packaging): server first, it wipes release/. */
export function packagingSteps(rid: string, hybrid: boolean): BuildStep[] {
  const steps: BuildStep[] = [
    { what: 'dotnet restore', program: 'dotnet', args: ['restore'] },
    {
      what: 'dotnet build Content.Packaging',
      program: 'dotnet',
      args: ['build', 'Content.Packaging', '--configuration', 'Release', '--no-restore', '/m'],
    },
    {
      what: 'server packaging',
      program: 'dotnet',
      args: ['run', '--project', 'Content.Packaging', 'server', '--platform', rid, ...(hybrid ? ['--hybrid-acz'] : [])],
    },
  ];
  if (!hybrid) {
    steps.push({
      what: 'client packaging',
      program: 'dotnet',
      args: ['run', '--project', 'Content.Packaging', 'client', '--no-wipe-release'],
    });
  }
  return steps;
}

/** The older scripts, with the real watchdog's arguments and order: server, then (non-hybrid) client. */
export function pythonSteps(rid: string, hybrid: boolean): BuildStep[] {
  const steps: BuildStep[] = [
    {
      what: `server packaging (${SERVER_SCRIPT})`,
      program: PYTHON,
      args: [SERVER_SCRIPT, ...(hybrid ? ['--hybrid-acz'] : []), '-p', rid],
    },
  ];
  if (!hybrid) steps.push({ what: `client packaging (${CLIENT_SCRIPT})`, program: PYTHON, args: [CLIENT_SCRIPT] });
  return steps;
}
