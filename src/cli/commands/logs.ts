import { join } from 'node:path';
import { UsageError } from '../../errors.ts';
import { parseCommandArgs, wholeNumber } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { onInterrupt } from '../client/interrupt.ts';
import { followLines, readLastLines } from '../client/log-view.ts';
import { logPath } from '../../process/log-file.ts';
import { reportClientErrors, warnTo } from '../client/report.ts';
import { createTarget } from '../client/target.ts';

const USAGE = `usage: watchdog logs <key> [-f] [-n N] [--config F]
  -f, --follow      keep printing new lines (across rotation) until Ctrl-C
  -n, --lines N     how many of the last lines to print first (default 50)
  --config F        the appsettings.yml that names the instance folders (default: ./appsettings.yml)`;

/** `watchdog logs <key>`: the tail of `<instance dir>/logs/server.log`, read from this machine's files. */
export async function run(args: string[]): Promise<number> {
  return reportClientErrors('logs', async () => {
    const { values, positionals } = parseCommandArgs(args, {
      follow: { type: 'boolean', short: 'f' },
      lines: { type: 'string', short: 'n' },
      config: { type: 'string' },
    }, USAGE);
    const [key, ...extra] = positionals;
    if (key === undefined) throw new UsageError(`missing the instance key\n${USAGE}`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"\n${USAGE}`);
    const n = wholeNumber('-n', values.lines, 0, USAGE) ?? 50;

    const target = createTarget({ configFile: values.config, cwd: process.cwd(), env: process.env, warn: warnTo('logs') });
    const config = await target.config('watchdog logs');
    const instance = config.instances.find((i) => i.key === key);
    if (!instance) {
      const known = config.instances.map((i) => i.key).join(', ') || 'none';
      throw new ClientError(`no instance "${key}" in ${config.files.at(-1) ?? 'appsettings.yml'} (instances: ${known})`);
    }
    const logDir = join(instance.dir, 'logs');
    const tail = readLastLines(logDir, n);
    const write = (line: string) => process.stdout.write(line + '\n');
    for (const line of tail.lines) write(line);
    if (!values.follow) {
      if (tail.partial !== null) write(tail.partial);
      if (!tail.found) process.stderr.write(`watchdog logs: no log yet at ${logPath(logDir)} (has ${key} been started?)\n`);
      return 0;
    }
    if (!tail.found) process.stderr.write(`watchdog logs: waiting for ${logPath(logDir)} to appear\n`);
    const stop = onInterrupt();
    // A closed pipe (`watchdog logs -f | head`) ends following like Ctrl-C does.
    process.stdout.once('error', stop.trigger);
    try {
      await followLines(logDir, tail.offset, write, stop.signalled);
    } finally {
      stop.dispose();
      process.stdout.off('error', stop.trigger);
    }
    return 0;
  });
}
