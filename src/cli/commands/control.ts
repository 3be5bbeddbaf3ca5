import { UsageError } from '../../errors.ts';
import type { ControlAction } from '../../supervisor/contract.ts';
import type { Command, CommandOptions } from '../registry.ts';
import { parseCommandArgs } from '../client/args.ts';
import { postControl } from '../client/http.ts';
import { withInstanceList } from '../client/instance-sources.ts';
import { reportClientErrors, warnTo } from '../client/report.ts';
import { createTarget } from '../client/target.ts';

export const usage = (action: string) => `usage: watchdog ${action} <key> [--url URL] [--token T] [--config F] [--json]
  --url URL     the watchdog's address (default: WATCHDOG_URL, else Urls from appsettings.yml, else http://localhost:5000)
  --token T     the instance's ApiToken (default: WATCHDOG_TOKEN, else the local appsettings.yml)
  --config F    the appsettings.yml to read the address and token from
  --json        print the outcome as JSON`;

export const options = {
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies CommandOptions;

/**
 * `watchdog restart|update|stop|rollback <key>`: POST /instances/<key>/<action> as Basic `<key>:<token>`.
 * The daemon queues the action and answers at once; `watchdog status` shows the outcome.
 */
export function control(action: ControlAction): Command {
  return (args) => reportClientErrors(action, async () => {
    const { values, positionals } = parseCommandArgs(args, options, usage(action));
    const [key, ...extra] = positionals;
    if (key === undefined) throw new UsageError(`missing the instance key\n${usage(action)}`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"\n${usage(action)}`);

    const target = createTarget({ url: values.url, token: values.token, configFile: values.config, cwd: process.cwd(), env: process.env, warn: warnTo(action) });
    const url = await target.url();
    await withInstanceList(target, async () => postControl({ url, key, token: await target.token(key) }, action));
    if (values.json) process.stdout.write(JSON.stringify({ key, action, ok: true, url }) + '\n');
    else process.stdout.write(`${action} requested for ${key} at ${url}\n`);
    return 0;
  });
}
