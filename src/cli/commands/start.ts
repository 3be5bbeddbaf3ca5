import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/load.ts';
import { printConfigProblems } from '../../config/summary.ts';
import { UsageError } from '../../errors.ts';
import { configureLogging, createLogger, parseLogLevel } from '../../log.ts';
import { runDaemon } from '../../daemon/run.ts';

/** `watchdog [start] [--config F] [--log-level L]`: runs the daemon until SIGINT/SIGTERM. */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { config: { type: 'string' }, 'log-level': { type: 'string' }, 'log-format': { type: 'string' } },
    strict: true,
  });
  const cliLevel = values['log-level'];
  if (cliLevel !== undefined && !parseLogLevel(cliLevel)) throw new UsageError(`--log-level: expected debug, info, warn or error, got "${cliLevel}"`);

  const loaded = await loadConfig({ file: values.config, cwd: process.cwd(), env: process.env });
  if (!loaded.ok) {
    printConfigProblems(loaded.problems);
    return 2;
  }
  const { config } = loaded;
  configureLogging({ level: parseLogLevel(cliLevel) ?? config.logLevel, json: values['log-format'] === 'json' ? true : undefined });
  const log = createLogger('watchdog');
  for (const w of loaded.warnings) log.warn(w);

  const daemon = await runDaemon(config);
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn(`second ${sig}: exiting now`);
      process.exit(1);
    }
    void daemon.shutdown(sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await daemon.done;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return 0;
}
