import { UsageError } from '../../errors.ts';
import { publishBuild } from '../../updates/manifest/publish.ts';
import { parseCommandArgs } from '../client/args.ts';
import type { CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog manifest <dir> --base-url URL [--out FILE]
  Hashes the server archives (<name>_<platform>.zip, <name>-<platform>.tar.gz) and the client archive
  (a name containing "client") in <dir>, and adds them as a new build to the manifest (default <dir>/manifest.json).
  URL is where <dir>'s files are served; each file's URL is URL + its name.`;

export const options = {
  'base-url': { type: 'string' },
  out: { type: 'string', short: 'o' },
} as const satisfies CommandOptions;

export async function run(args: string[]): Promise<number> {
  try {
    return await publish(args);
  } catch (err) {
    // Returned rather than left to the dispatcher, so `run` alone gives the exit code (a missing folder is 2 too).
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`watchdog manifest: ${err.message}\n`);
    return 2;
  }
}

async function publish(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  if (positionals.length !== 1) {
    throw new UsageError(
      `${positionals.length === 0 ? 'no folder given' : `one folder expected, got ${positionals.length}`}\n${usage}`,
    );
  }
  const baseUrl = values['base-url'];
  if (!baseUrl) throw new UsageError(`--base-url is required (where the archives will be served)\n${usage}`);
  const result = await publishBuild({ dir: positionals[0] as string, baseUrl, out: values.out });
  const files = [
    ...Object.entries(result.servers).map(([platform, name]) => `  server ${platform}: ${name}`),
    result.client ? `  client: ${result.client}` : '  client: (none found; the manifest lists server archives only)',
  ];
  process.stdout.write(`added build ${result.key} to ${result.manifestPath}\n${files.join('\n')}\n`);
  return 0;
}
