/**
 * `Limits` through the real daemon. Where the memory, cpu and pids controllers are delegated to this process's
 * cgroup v2, the running server's cgroup holds them (`memory.max` 64000000 for `MemoryMB: 64`, decimal as every size
 * here; `cpu.max`, `pids.max`), and a server that allocates past its memory limit is killed by the kernel and told
 * as such: the status's last exit, the chat's notice. Where they are not (most CI machines, containers), that test is
 * reported skipped with the reason, and the other runs: the limits are a wall, not a precondition, so the server
 * runs without them and the log says once which could not apply and why.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cgroup2Mount, cgroupOf } from '../../src/process/cgroup.ts';
import { undelegated } from '../../src/process/cgroup-limits.ts';
import { testConfig } from '../_support/config.ts';
import { type RunningDaemon, waitState, withDaemons } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';

const TOKEN = 'tok';
const KEY = 'hog';
const LIMITS = '      Limits:\n        MemoryMB: 64\n        CpuPercent: 50\n        Tasks: 64';

/** The controllers not delegated to a daemon started from here, each with why. */
const missing = await undelegated(['memory', 'cpu', 'pids']);

/**
 * Why the kernel cannot enforce the limits for a daemon started from here, or null when it can. Besides the
 * controllers, this test's own cgroup (the daemon's) holds this test's process: cgroup v2 hands the memory controller
 * down from such a cgroup only at the root of the hierarchy, which has no `cgroup.type`.
 */
async function whyNoLimits(): Promise<string | null> {
  const byReason = new Map<string, string[]>();
  for (const [c, reason] of missing) byReason.set(reason, [...(byReason.get(reason) ?? []), c]);
  if (missing.size > 0) return [...byReason].map(([reason, cs]) => `${cs.join(', ')}: ${reason}`).join('; ');
  const mount = await cgroup2Mount();
  const own = mount === null ? null : await cgroupOf('self', mount);
  if (own !== null && existsSync(join(own, 'cgroup.type')))
    return `this test's cgroup ${own} holds its own processes, so no daemon started from it can hand the memory controller down (run the tests as root in the root cgroup)`;
  return null;
}
const unavailable = await whyNoLimits();
if (unavailable) console.log(`hard limits: the real-kernel test is skipped: ${unavailable}`);

const s = suite('e2e :: hard limits in the launch cgroup');
const withKernel = unavailable ? s.skip : s;
const withoutKernel = unavailable ? s : s.skip;

interface ExitStatus {
  pid: number | null;
  lastExit: { reason: string; signal: string | null; detail: string | null } | null;
}
const statusOf = async (d: RunningDaemon) => (await d.status(KEY, TOKEN)) as unknown as ExitStatus;

/** The cgroup v2 folder `pid` runs in. */
async function cgroupFolder(pid: number): Promise<string> {
  const mount = await cgroup2Mount();
  const dir = mount === null ? null : await cgroupOf(pid, mount);
  assert.ok(dir, `pid ${pid} has a cgroup v2 folder`);
  return dir;
}

withKernel(
  'hard limits :: memory.max, cpu.max, pids.max written; past memory.max the kernel kills it, told as such',
  () =>
    withDaemons({ webhook: true }, async ({ hook, start }) => {
      const port = await freePort();
      const instances = [{ key: KEY, port, runCommand: fixture('alloc-on-signal.mjs'), extra: LIMITS }];
      const d = await start(testConfig({ webhook: hook?.url, instances }));
      const first = await waitState(d, KEY, TOKEN, 'server.running');
      assert.not.match(d.log(), 'cannot apply', 'every limit applied');
      const dir = await cgroupFolder(first.pid ?? 0);
      const read = (file: string) => readFile(join(dir, file), 'utf8').then((t) => t.trim());
      assert.is(await read('memory.max'), '64000000', 'MemoryMB 64 in decimal bytes');
      assert.is(await read('cpu.max'), '50000 100000', 'half of one core');
      assert.is(await read('pids.max'), '64');

      process.kill(first.pid ?? 0, 'SIGUSR2');
      const killed = await waitFor(
        'the exit at the memory limit',
        async () => {
          const st = await statusOf(d);
          return st.lastExit ? st : undefined;
        },
        30_000,
      );
      assert.equal(killed.lastExit, {
        ...killed.lastExit,
        reason: 'memory-limit',
        signal: 'SIGKILL',
        detail: 'killed at its memory limit of 64 MB',
      });
      await waitFor(
        'the notice',
        () => hook?.messages.some((m) => m.content.includes('was killed at its memory limit of 64 MB')) || undefined,
        15_000,
      );
      // A crash like any other: relaunched at once, the first of a loop.
      await waitState(d, KEY, TOKEN, 'server.running', { notPid: first.pid });
    }),
);

withoutKernel('hard limits :: without the controllers the server runs, and the log says once what cannot apply', () =>
  withDaemons({}, async ({ start }) => {
    const port = await freePort();
    const d = await start(testConfig({ instances: [{ key: KEY, port, extra: LIMITS }] }));
    const first = await waitState(d, KEY, TOKEN, 'server.running');
    const told = () =>
      d.log().match(/Limits\.MemoryMB \(memory\.max\).* cannot apply: .*; the server runs without/g) ?? [];
    assert.is(told().length, 1, d.log());
    // The others are named with it where their controllers are missing too (all three on a cgroup v1 host).
    if (missing.has('cpu') && missing.has('pids'))
      assert.match(told()[0] ?? '', /Limits\.CpuPercent \(cpu\.max\) and Limits\.Tasks \(pids\.max\)/);
    assert.is(await d.control(KEY, TOKEN, 'restart'), 200);
    const second = await waitState(d, KEY, TOKEN, 'server.running', { notPid: first.pid });
    assert.ok(second.pid !== first.pid);
    assert.is(told().length, 1, 'said once per instance, not at every launch');
  }),
);

s.run();
