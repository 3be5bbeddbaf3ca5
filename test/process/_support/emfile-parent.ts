/**
 * Helper process for the launch-blocked test (not a suite): run under a low descriptor limit, it opens /dev/null
 * until the kernel says EMFILE, tries spawnServer (piped or persist, argv[3]), then frees the descriptors and tries
 * again. Prints one JSON line: how each attempt ended, and what the log's outage, shared by the attempts, reported.
 * Usage: node --import tsx emfile-parent.ts '<json {spec, logDir}>' piped|persist
 */
import { closeSync, openSync } from 'node:fs';
import { LaunchBlockedError } from '../../../src/errors.ts';
import type { LaunchSpec } from '../../../src/process/launch-spec.ts';
import { spawnServer } from '../../../src/process/spawn.ts';
import { createWriteOutage } from '../../../src/process/write-outage.ts';

const { spec, logDir } = JSON.parse(process.argv[2] ?? '{}') as { spec: LaunchSpec; logDir: string };
const persist = process.argv[3] === 'persist';
const health: string[] = [];
// One outage for every attempt, as the daemon keeps one per instance across launches.
const outage = createWriteOutage(60_000, {
  onFailing: (code) => health.push(`failing ${code}`),
  onResumed: (dropped) => health.push(`resumed ${dropped}`),
});

async function attempt(): Promise<Record<string, unknown>> {
  try {
    const proc = await spawnServer(spec, { logDir, persist, outage });
    const status = await proc.exited;
    return { ok: true, code: status.code };
  } catch (err) {
    const blocked = err instanceof LaunchBlockedError;
    return { ok: false, name: (err as Error).name, kind: blocked ? err.kind : null, message: (err as Error).message };
  }
}

const held: number[] = [];
/**
 * Opens /dev/null until the kernel says EMFILE. Called again right before each blocked attempt: a descriptor that
 * something else in this process released since (a loader's file write finishing) would let the attempt open
 * server.log, and the log's outage would then never begin. Bounded: the test runs this under a limit of a few
 * dozen descriptors.
 */
function starve(): void {
  for (let i = 0; i < 10_000; i++) {
    try {
      held.push(openSync('/dev/null', 'r'));
    } catch {
      break;
    }
  }
}
starve();
const starved = await attempt();
starve();
const again = await attempt();
for (const fd of held.splice(0)) closeSync(fd);
const freed = await attempt();
process.stdout.write(`${JSON.stringify({ starved, again, freed, health })}\n`);
