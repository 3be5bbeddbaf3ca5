import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * How an engine repository packages itself, as the real watchdog's `UpdateProviderGit.cs` runs it: `Content.Packaging`
 * with `dotnet`, or in older ones the `Tools/package_*_build.py` scripts; both leave `release/SS14.Server_<rid>.zip`
 * and, non-hybrid, `release/SS14.Client.zip`.
 */

export const SERVER_SCRIPT = 'Tools/package_server_build.py';
export const CLIENT_SCRIPT = 'Tools/package_client_build.py';

/**
 * Debian and Ubuntu ship only `python3` (the scripts' own shebang); on Windows `python3` is often the Store's
 * placeholder. The real watchdog runs `python`.
 */
const PYTHON = process.platform === 'win32' ? 'python' : 'python3';

/** No telemetry, no MSBuild nodes left holding the build log's pipes, python's output as it comes. */
export const ENGINE_ENV: Record<string, string> = {
  DOTNET_CLI_TELEMETRY_OPTOUT: '1',
  DOTNET_NOLOGO: '1',
  MSBUILDDISABLENODEREUSE: '1',
  PYTHONUNBUFFERED: '1',
};

const isDir = async (path: string) => (await stat(path).catch(() => null))?.isDirectory() ?? false;
const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() ?? false;

/** `Content.Packaging` first, as in the real watchdog; null for neither. */
export async function detectEngine(sourceDir: string): Promise<'packaging' | 'python' | null> {
  if (await isDir(join(sourceDir, 'Content.Packaging'))) return 'packaging';
  if (await isFile(join(sourceDir, SERVER_SCRIPT))) return 'python';
  return null;
}

export const hasClientScript = (sourceDir: string): Promise<boolean> => isFile(join(sourceDir, CLIENT_SCRIPT));

/** Server first: it wipes release/. */
export function packagingSteps(rid: string, hybrid: boolean) {
  const steps = [
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

/** The real watchdog's arguments and order. */
export function pythonSteps(rid: string, hybrid: boolean) {
  const steps = [
    {
      what: `server packaging (${SERVER_SCRIPT})`,
      program: PYTHON,
      args: [SERVER_SCRIPT, ...(hybrid ? ['--hybrid-acz'] : []), '-p', rid],
    },
  ];
  if (!hybrid) steps.push({ what: `client packaging (${CLIENT_SCRIPT})`, program: PYTHON, args: [CLIENT_SCRIPT] });
  return steps;
}
