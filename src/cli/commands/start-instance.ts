import { parseCommandArgs } from '../client/args.ts';
import { fetchStatus } from '../client/http.ts';
import { atInstance } from '../client/instance-sources.ts';
import { reportClientErrors } from '../client/report.ts';
import { control, options } from './control.ts';
import { targetOf } from './target-flags.ts';

export const startInstanceUsage = `usage: watchdog start <key> [--wait [--timeout S]] [--url URL] [--token T] [--config F] [--json]
  Starts a stopped instance (one an operator stopped stays stopped across daemon restarts): the same request as
  \`watchdog restart <key>\`, sent only when the instance is stopped; a running one is left alone. Options as for
  watchdog restart.`;

/**
 * `watchdog start <key>`: what a PM2 or systemd user types to undo a stop. Restart is how the daemon starts a stopped
 * instance (the dashboard's Start button too); this only refuses to restart one that runs.
 */
export function startInstance(args: string[]): Promise<number> {
  return reportClientErrors('start', async () => {
    const { values, positionals } = parseCommandArgs(args, options, startInstanceUsage);
    const key = positionals[0] ?? '';
    const status = await atInstance(targetOf('start', values), key, fetchStatus);
    if (!status.state.startsWith('stopped.')) {
      process.stdout.write(
        `${key} is ${status.state}, not stopped; nothing to start (watchdog restart ${key} restarts it)\n`,
      );
      return 0;
    }
    return control('restart')(args);
  });
}
