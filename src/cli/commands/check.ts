import { loadConfig } from '../../config/load.ts';
import { formatSummary, printConfigProblems } from '../../config/summary.ts';
import { UsageError } from '../../errors.ts';
import { parseCommandArgs } from '../client/args.ts';
import { runCommandWarnings } from '../client/run-command-check.ts';
import type { CommandOptions } from '../registry.ts';

export { printConfigProblems };

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
    printConfigProblems(loaded.problems);
    return 2;
  }
  for (const w of [...loaded.warnings, ...runCommandWarnings(loaded.config)]) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`configuration is valid\n${formatSummary(loaded.config, cwd)}`);
  return 0;
}
