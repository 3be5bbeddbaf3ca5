import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CliResult, runMain } from '../../_support/cli.ts';

/** Writes each `name → text` into `dir` (text lines joined with "\n"). */
export async function writeFiles(dir: string, files: Record<string, string | string[]>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await writeFile(join(dir, name), Array.isArray(text) ? `${text.join('\n')}\n` : text);
  }
}

/** appsettings lines: the `top` keys, then Servers with its `servers` keys and each instance's lines under Instances. */
export function serversYaml(
  instances: Record<string, string[]>,
  opts: { top?: string[]; servers?: string[] } = {},
): string[] {
  return [
    ...(opts.top ?? []),
    'Servers:',
    ...(opts.servers ?? []).map((l) => `  ${l}`),
    '  Instances:',
    ...Object.entries(instances).flatMap(([key, lines]) => [`    ${key}:`, ...lines.map((l) => `      ${l}`)]),
  ];
}

/** A minimal valid appsettings.yml body, with extra lines under the instance `alpha`. */
export function oneInstance(extra: string[] = [], top: string[] = []): string[] {
  return serversYaml({ alpha: ['ApiPort: 1212', ...extra] }, { top });
}

/** Writes `file` (one instance, `top` as its daemon-wide lines) into `dir`, then runs `watchdog <args>` there. */
export async function checkTop(dir: string, file: string, args: string[], top: string[]): Promise<CliResult> {
  await writeFiles(dir, { [file]: serversYaml({ alpha: ['ApiToken: t', 'ApiPort: 1212'] }, { top }) });
  return runMain(args, { cwd: dir, env: { WATCHDOG_ENV: '' } });
}
