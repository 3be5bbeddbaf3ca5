import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './env.ts';

/** Path of a fixture game server in test/fixtures/servers/. */
export const fixture = (name: string) => join(ROOT, 'test/fixtures/servers', name);

/**
 * Writes an executable wrapper script that execs `target` (a .mjs fixture run by this Node, or any program)
 * with the watchdog's arguments. Rewriting it later changes what the next launch runs.
 */
export async function writeServerScript(path: string, target: string): Promise<string> {
  const run = target.endsWith('.mjs') ? `"${process.execPath}" "${target}"` : `"${target}"`;
  await writeFile(path, `#!/bin/sh\nexec ${run} "$@"\n`);
  await chmod(path, 0o755);
  return path;
}
