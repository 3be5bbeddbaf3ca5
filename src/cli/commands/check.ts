import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/load.ts';
import { formatSummary, printConfigProblems } from '../../config/summary.ts';
import { UsageError } from '../../errors.ts';

export { printConfigProblems };

/**
 * `watchdog check [--config FILE] [--urls URLS]`: validates the configuration and summarises it, touching no folder and no
 * process. Exit 0 when valid, 2 when not (problems on stderr, one per line).
 */
export async function run(args: string[]): Promise<number> {
  let values: { config?: string; urls?: string };
  try {
    ({ values } = parseArgs({ args, options: { config: { type: 'string' }, urls: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)} (usage: watchdog check [--config FILE] [--urls URLS])`, { cause: err });
  }
  const cwd = process.cwd();
  const loaded = await loadConfig({ file: values.config, cwd, env: process.env, urls: values.urls });
  if (!loaded.ok) {
    printConfigProblems(loaded.problems);
    return 2;
  }
  for (const w of loaded.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`configuration is valid\n${formatSummary(loaded.config, cwd)}`);
  return 0;
}
