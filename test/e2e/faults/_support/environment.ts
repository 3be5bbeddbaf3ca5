/**
 * Helpers of the environment fault suites (full disk, removed logs/, request floods); not a suite itself.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Puts the instance root of a `testConfig` text at `root` (a small file system, say). */
export function withInstanceRoot(yaml: string, root: string): string {
  return yaml.replace(/^ {2}Instances:$/m, `  InstanceRoot: ${JSON.stringify(root)}\n  Instances:`);
}

/** The highest `chat <n>` line (test/fixtures/servers/chatty.mjs) in server.log and its rotations; 0 for none. */
export async function lastChat(logDir: string, files = 3): Promise<number> {
  let max = 0;
  for (let i = 0; i < files; i++) {
    const text = await readFile(join(logDir, i === 0 ? 'server.log' : `server.log.${i}`), 'utf8').catch(() => '');
    for (const m of text.matchAll(/^chat (\d+) /gm)) max = Math.max(max, Number(m[1]));
  }
  return max;
}
