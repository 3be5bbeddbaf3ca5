import { parseArgs } from 'node:util';
import { AddressError, probe } from '../../kit/probe.ts';
import { formatProbe } from '../../kit/probe-format.ts';
import type { CommandOptions } from '../registry.ts';

const USAGE =
  'usage: watchdog probe <address> [--json]\n  address: host[:port] (port 1212), ss14://host[:port], ss14s://host[/path], or an http(s):// URL\n';

export const usage = USAGE;
export const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies CommandOptions;

/**
 * `watchdog probe <address> [--json]`: reads a game server's /status and /info as a launcher would.
 * Exit 0 when valid, 1 when unreachable or invalid, 2 on usage errors.
 */
export async function run(args: string[]): Promise<number> {
  let values: { json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, allowPositionals: true, options }));
  } catch (err) {
    process.stderr.write(`watchdog probe: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(
      `watchdog probe: ${positionals.length === 0 ? 'no address given' : `one address expected, got ${positionals.length}`}\n${USAGE}`,
    );
    return 2;
  }
  try {
    const details = await probe(positionals[0] as string);
    process.stdout.write(values.json ? JSON.stringify(details.result, null, 2) + '\n' : formatProbe(details));
    return details.result.problems.length === 0 ? 0 : 1;
  } catch (err) {
    if (err instanceof AddressError) {
      process.stderr.write(`watchdog probe: ${err.message}\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}
