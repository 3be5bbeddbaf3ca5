import { UsageError } from '../../errors.ts';
import { AddressError, formatProbe, probe } from '../../kit/probe.ts';
import { parseCommandArgs } from '../client/args.ts';
import type { CommandOptions } from '../registry.ts';

export const usage =
  'usage: watchdog probe <address> [--json]\n  address: host[:port] (port 1212), ss14://host[:port], ss14s://host[/path], or an http(s):// URL';

export const options = { json: { type: 'boolean' } } as const satisfies CommandOptions;

/** `watchdog probe <address>`: exit 1 when the server is unreachable or its answers are invalid. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  if (positionals.length !== 1) {
    const problem = positionals.length === 0 ? 'no address given' : `one address expected, got ${positionals.length}`;
    throw new UsageError(`${problem}\n${usage}`);
  }
  try {
    const details = await probe(positionals[0] as string);
    process.stdout.write(values.json ? JSON.stringify(details.result, null, 2) + '\n' : formatProbe(details));
    return details.result.problems.length === 0 ? 0 : 1;
  } catch (err) {
    if (err instanceof AddressError) throw new UsageError(`${err.message}\n${usage}`, { cause: err });
    throw err;
  }
}
