import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type DaemonCtx, daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { isAlive, killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/** forker.mjs starts two grandchildren in its process group and writes their pids to PIDS_FILE. */
/** Where forker.mjs writes the pids of its two children. */
const pidsFile = (ctx: { dir: string }, key: string) => join(ctx.dir, `${key}.pids`);

const test = daemonSuite('e2e :: faults: a server that forks children', {
  prefix: 'wd-forker-',
  ctx: { pids: new Set<number>() },
  config: async (ctx) => {
    const inst = async (key: string) => ({
      key,
      port: await freePort(),
      runCommand: fixture('forker.mjs'),
      timeoutSeconds: 3,
      extra: `      EnvironmentVariables: { PIDS_FILE: ${JSON.stringify(pidsFile(ctx, key))}, FIXTURE_LIFETIME_MS: "60000" }`,
    });
    return testConfig({ instances: [await inst('r'), await inst('k')] });
  },
  after: (ctx) => {
    for (const pid of ctx.pids) killGroup(pid);
  },
});
type Ctx = DaemonCtx & { pids: Set<number> };

/** The running server and the grandchildren it reported (alive). */
async function family(ctx: Ctx, key: string): Promise<{ pid: number; children: number[] }> {
  const s = await waitStatus(ctx.daemon!, key, 'tok', 'server.running', running, 30_000);
  ctx.pids.add(s.pid!);
  const children = await waitFor(
    `${key}'s grandchildren`,
    async () => {
      const list = JSON.parse(await readFile(pidsFile(ctx, key), 'utf8')) as number[];
      return list.length === 2 && list.every(isAlive) ? list : undefined;
    },
    10_000,
  );
  for (const p of children) ctx.pids.add(p);
  return { pid: s.pid!, children };
}

/** Waits for `key` to run under a pid other than `old` (kept for cleanup). */
async function relaunched(ctx: Ctx, key: string, old: number, what: string, timeoutMs: number): Promise<void> {
  const next = await waitStatus(ctx.daemon!, key, 'tok', what, (s) => running(s) && s.pid !== old, timeoutMs);
  ctx.pids.add(next.pid!);
}

test('forker :: none of its children survive a restart', async (ctx) => {
  const before = await family(ctx, 'r');
  assert.is(await ctx.daemon!.control('r', 'tok', 'restart'), 200);
  await relaunched(ctx, 'r', before.pid, 'relaunched', 30_000);
  await waitFor('the old grandchildren gone', () => before.children.every((p) => !isAlive(p)), 5000);
  assert.not.ok(isAlive(before.pid));
});

test('forker :: none of its children survive a hang kill', async (ctx) => {
  const before = await family(ctx, 'k');
  // A frozen main loop: no more check-ins; the hang kill must take the whole group.
  process.kill(before.pid, 'SIGSTOP');
  await relaunched(ctx, 'k', before.pid, 'killed as hung and relaunched', 20_000);
  assert.match(ctx.daemon!.log(), /Server `k` timed out and will be killed/);
  await waitFor('the old grandchildren gone', () => before.children.every((p) => !isAlive(p)), 5000);
  assert.not.ok(isAlive(before.pid));
});

test.run();
