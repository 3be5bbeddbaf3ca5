import { accessSync, constants, statSync } from 'node:fs';
import { relative } from 'node:path';
import type { ResolvedConfig, ResolvedInstance } from '../../config/resolved.ts';

/** Update types that never put a server build in place: what RunCommand names must already be there. */
const INSTALLS_NOTHING = new Set<string | undefined>([undefined, 'Local', 'Dummy']);

function problem(program: string): string | undefined {
  let isFile: boolean;
  try {
    isFile = statSync(program).isFile();
  } catch {
    return 'does not exist';
  }
  if (!isFile) return 'is not a file';
  try {
    accessSync(program, constants.X_OK);
    return undefined;
  } catch {
    return 'is not executable (chmod +x it)';
  }
}

function warning(instance: ResolvedInstance, cwd: string): string | undefined {
  const type = instance.settings.UpdateType;
  if (!INSTALLS_NOTHING.has(type)) return undefined;
  const what = problem(instance.program);
  if (what === undefined) return undefined;
  const shown = relative(cwd, instance.program) || instance.program;
  const provider = type === undefined ? 'no UpdateType' : `UpdateType ${type}`;
  return `Servers.Instances.${instance.key}.RunCommand: ${shown} ${what}, and with ${provider} no update provider installs it; the server cannot start until it is there`;
}

/**
 * `watchdog check`'s look at each instance's program: one warning per instance whose RunCommand does not exist or
 * is not executable while its update type (none, Local, Dummy) never installs a build. Reads only file metadata.
 */
export function runCommandWarnings(config: ResolvedConfig): string[] {
  return config.instances.map((i) => warning(i, config.workDir)).filter((w): w is string => w !== undefined);
}
