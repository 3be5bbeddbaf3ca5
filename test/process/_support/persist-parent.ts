/**
 * Helper process for the PersistServers test (not a suite): plays a daemon that launches a server with
 * `persist: true`, waits until the server's first line arrives through the log tail, prints
 * `{"pid": N, "line": "..."}` on stdout, detaches and exits on its own (a hang here means detach()
 * left something referenced).
 * Usage: node --import tsx persist-parent.ts '<json {spec, logDir}>'
 */
import type { LaunchSpec } from '../../../src/process/launch-spec.ts';
import { spawnServer } from '../../../src/process/spawn.ts';

const { spec, logDir } = JSON.parse(process.argv[2] ?? '{}') as { spec: LaunchSpec; logDir: string };
let resolveLine: (line: string) => void = () => {};
const firstLine = new Promise<string>((r) => (resolveLine = r));
const proc = await spawnServer(spec, {
  logDir,
  persist: true,
  followMs: 50,
  onLine: (_stream, line) => resolveLine(line),
});
const line = await Promise.race([
  firstLine,
  new Promise<string>((r) => setTimeout(() => r('(no line)'), 10_000).unref()),
]);
process.stdout.write(JSON.stringify({ pid: proc.pid, line }) + '\n');
proc.detach();
