/**
 * The hard limits' pure parts: the text of `cpu.max` and `memory.max`, the `oom_kill` count of `memory.events`, the
 * lines that say which limit could not apply; and, on this machine's real cgroup v2, which controllers a daemon
 * started from here would lack. The kernel enforcing them: test/e2e/hard-limits.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cgroup2Mount, cgroupOf } from '../../src/process/cgroup.ts';
import {
  chainDown,
  cpuMaxText,
  limitFiles,
  memoryMaxText,
  neededControllers,
  oomKills,
  unappliedLines,
  undelegated,
} from '../../src/process/cgroup-limits.ts';

const test = suite('process :: cgroup hard limits');

test('limits :: cpu.max: percent of one core as a quota of the 100 ms period, at least the 1 ms the kernel takes', () => {
  assert.is(cpuMaxText(100), '100000 100000', 'one core');
  assert.is(cpuMaxText(250), '250000 100000', 'two and a half cores');
  assert.is(cpuMaxText(12.5), '12500 100000');
  assert.is(cpuMaxText(1), '1000 100000');
  assert.is(cpuMaxText(0.2), '1000 100000', 'below the least quota: the least');
});

test('limits :: memory.max: decimal megabytes, in whole bytes', () => {
  assert.is(memoryMaxText(64), '64000000');
  assert.is(memoryMaxText(2048), '2048000000');
  assert.is(memoryMaxText(0.5), '500000');
});

test('limits :: memory.events: the oom_kill count, 0 when absent or unreadable', () => {
  const events = 'low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 1\n';
  assert.is(oomKills(events), 1);
  assert.is(oomKills('low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n'), 0);
  assert.is(oomKills(''), 0);
  assert.is(oomKills('oom_kill x\n'), 0);
  assert.is(oomKills('oom_group_kill 3\n'), 0, 'oom_group_kill is not oom_kill');
});

test('limits :: limit files and controllers: only what is set', () => {
  assert.equal(
    limitFiles({ memoryMB: 64, tasks: 100 }).map((f) => `${f.controller} ${f.file}=${f.text} (${f.key})`),
    ['memory memory.max=64000000 (MemoryMB)', 'pids pids.max=100 (Tasks)'],
  );
  assert.equal(neededControllers({ tasks: 1, cpuPercent: 50, memoryMB: 1 }), ['cpu', 'memory', 'pids']);
  assert.equal(neededControllers({}), []);
});

test('limits :: the cgroups that hand a controller down: the daemon own one, then each below it to the parent', () => {
  assert.equal(chainDown('/cg/own', '/cg/own/watchdog-1/alpha'), [
    '/cg/own',
    '/cg/own/watchdog-1',
    '/cg/own/watchdog-1/alpha',
  ]);
  assert.equal(chainDown('/cg/own', '/cg/own'), ['/cg/own']);
  assert.equal(chainDown('/cg/own', '/elsewhere'), ['/cg/own']);
});

test('limits :: what could not apply: one line per reason, naming each key and file', () => {
  const limits = { memoryMB: 64, cpuPercent: 50, tasks: 100 };
  const missing = 'the controller is not delegated';
  assert.equal(
    unappliedLines(
      limits,
      new Map([
        ['memory', missing],
        ['cpu', missing],
        ['pids', missing],
      ]),
    ),
    [`Limits.MemoryMB (memory.max), Limits.CpuPercent (cpu.max) and Limits.Tasks (pids.max) cannot apply: ${missing}`],
  );
  assert.equal(
    unappliedLines(
      limits,
      new Map([
        ['cpu', missing],
        ['pids.max', 'cannot write 100 to it: EINVAL'],
      ]),
    ),
    [
      `Limits.CpuPercent (cpu.max) cannot apply: ${missing}`,
      'Limits.Tasks (pids.max) cannot apply: cannot write 100 to it: EINVAL',
    ],
  );
  assert.equal(unappliedLines(limits, new Map()), []);
});

test('limits :: this machine: a controller is missing exactly when the cgroup v2 of this process does not list it', async () => {
  const why = await undelegated(['cpu', 'memory', 'pids']);
  const mount = await cgroup2Mount();
  const own = mount === null ? null : await cgroupOf('self', mount);
  if (own === null) {
    assert.equal([...why.keys()], ['cpu', 'memory', 'pids'], 'without cgroup v2 none can apply');
    return;
  }
  const listed = (await readFile(join(own, 'cgroup.controllers'), 'utf8')).split(/\s+/);
  for (const c of ['cpu', 'memory', 'pids'] as const) {
    assert.is(why.has(c), !listed.includes(c), c);
    if (why.has(c))
      assert.match(why.get(c) ?? '', `not delegated to this daemon's cgroup ${own.replace(/(.)\/$/, '$1')} `);
  }
});

test.run();
