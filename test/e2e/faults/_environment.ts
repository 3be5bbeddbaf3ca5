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

/** One sample of the daemon's /metrics (loopback, no Admin configured): the value of `name{labels}`, or null. */
export async function metricValue(url: string, name: string, labels: Record<string, string>): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.indexOf('}'));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`))) return Number(line.split(' ').pop());
  }
  return null;
}
