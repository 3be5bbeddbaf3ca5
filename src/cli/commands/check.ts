import { accessSync, constants, statSync } from 'node:fs';
import { relative } from 'node:path';
import { loadConfig } from '../../config/load.ts';
import type { ResolvedConfig, ResolvedInstance } from '../../config/resolved.ts';
import { formatSummary } from '../../config/summary.ts';
import { UsageError } from '../../errors.ts';
import { parseCommandArgs } from '../client/args.ts';
import type { CommandOptions } from '../registry.ts';

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
function runCommandWarnings(config: ResolvedConfig): string[] {
  return config.instances.map((i) => warning(i, config.workDir)).filter((w): w is string => w !== undefined);
}

export const usage = `usage: watchdog check [--config FILE] [--urls URLS]
  Validates the configuration and summarises the instances; touches no folder and no process.
  Warns about an instance whose RunCommand is missing or not executable while no update provider installs it.
  --config FILE   the main configuration file (default: ./appsettings.yml)
  --urls URLS     as for watchdog start`;

export const options = { config: { type: 'string' }, urls: { type: 'string' } } as const satisfies CommandOptions;

/**
 * `watchdog check [--config FILE] [--urls URLS]`: validates the configuration and summarises it, touching no folder and no
 * process. Exit 0 when valid, 2 when not (problems on stderr, one per line).
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"\n${usage}`);
  const cwd = process.cwd();
  const loaded = await loadConfig({ file: values.config, cwd, env: process.env, urls: values.urls });
  if (!loaded.ok) {
    process.stderr.write(loaded.problems.map((p) => `${p}\n`).join(''));
    return 2;
  }
  for (const w of [...loaded.warnings, ...runCommandWarnings(loaded.config)]) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`configuration is valid\n${formatSummary(loaded.config, cwd)}`);
  return 0;
}
