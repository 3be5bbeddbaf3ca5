/**
 * `Servers.Instances.<key>.Limits` (the hard limits of a launch's cgroup v2): what loads, each problem named at its
 * key path; and `watchdog check` on this machine, where the limits cannot apply, warning which and why with the
 * systemd line that delegates the controllers (exit 0, as for every warning).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { cgroup2Mount, cgroupOf } from '../../src/process/cgroup.ts';
import { runMain } from '../_support/cli.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, serversYaml, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: Limits', { prefix: 'wd-limits-' });

test('limits :: MemoryMB, CpuPercent and Tasks load, whatever their case', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(['Limits:', '  MemoryMB: 2048', '  cpupercent: 150', '  Tasks: 512']),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) return assert.unreachable(r.problems.join('\n'));
  assert.equal(r.config.instances[0]?.settings.Limits, { MemoryMB: 2048, CpuPercent: 150, Tasks: 512 });
});

test('limits :: every problem at its key path', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml({
      alpha: ['ApiPort: 1212', 'Limits:', '  MemoryMB: 0', '  CpuPercent: 0.5', '  Tasks: 1.5'],
      beta: ['ApiPort: 1213', 'Limits:', '  MemoryMB: lots', '  Memory: 64'],
      gamma: ['ApiPort: 1214', 'Limits: 64'],
    }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.equal(r.ok ? [] : r.problems, [
    'appsettings.yml: Servers.Instances.alpha.Limits.MemoryMB: expected a positive number of megabytes, got 0',
    'appsettings.yml: Servers.Instances.alpha.Limits.CpuPercent: expected at least 1 percent, got 0.5',
    'appsettings.yml: Servers.Instances.alpha.Limits.Tasks: expected a whole number of tasks, got 1.5',
    'appsettings.yml: Servers.Instances.beta.Limits.MemoryMB: expected a number of megabytes, got "lots"',
    'appsettings.yml: Servers.Instances.beta.Limits.Memory: unknown key (did you mean MemoryMB?)',
    'appsettings.yml: Servers.Instances.gamma.Limits: expected a map of hard limits (MemoryMB, CpuPercent, Tasks), got "64"',
  ]);
});

/** The controllers this process's cgroup v2 lists (a daemon started from here gets the same); null without one. */
async function ownControllers(): Promise<string[] | null> {
  const mount = await cgroup2Mount();
  const own = mount === null ? null : await cgroupOf('self', mount);
  return own === null ? null : (await readFile(join(own, 'cgroup.controllers'), 'utf8')).split(/\s+/).filter(Boolean);
}

const check = (dir: string) => runMain(['check'], { cwd: dir, env: { WATCHDOG_ENV: '' } });
const LIMITS = ['Limits:', '  MemoryMB: 64', '  CpuPercent: 50', '  Tasks: 100'];

test('limits :: check warns, and exits 0, when the controllers are not delegated here', async ({ dir }) => {
  const listed = await ownControllers();
  const missing = ['memory', 'cpu', 'pids'].filter((c) => !listed?.includes(c));
  if (missing.length === 0) {
    console.log('limits :: every controller is delegated here: no warning to see');
    return;
  }
  await writeFiles(dir, {
    'appsettings.yml': oneInstance([
      ...LIMITS,
      'UpdateType: Manifest',
      'Updates: { ManifestUrl: http://127.0.0.1:9/m }',
    ]),
  });
  const r = await check(dir);
  assert.is(r.code, 0, r.stderr);
  const warning = r.stderr.split('\n').find((l) => l.includes('Servers.Instances.alpha: Limits.'));
  assert.ok(warning, `a warning about the limits:\n${r.stderr}`);
  assert.match(warning, /^warning: /);
  const named: Array<[string, string]> = [
    ['memory', 'MemoryMB (memory.max)'],
    ['cpu', 'CpuPercent (cpu.max)'],
    ['pids', 'Tasks (pids.max)'],
  ];
  for (const [c, key] of named)
    assert.is(warning.includes(`Limits.${key}`), missing.includes(c), `${c} named exactly when missing: ${warning}`);
  assert.match(warning, listed === null ? 'cgroup' : "not delegated to this daemon's cgroup");
  assert.match(warning, 'put "Delegate=yes" in the unit\'s [Service] section');
  assert.match(r.stdout, /^configuration is valid/);
});

test('limits :: check warns under Process.Tracking: Environment, which gives launches no cgroup', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      ['Limits: { Tasks: 100 }', 'UpdateType: Manifest', 'Updates: { ManifestUrl: http://127.0.0.1:9/m }'],
      ['Process:', '  Tracking: Environment'],
    ),
  });
  const r = await check(dir);
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    'warning: Servers.Instances.alpha: Limits.Tasks (pids.max) cannot apply: Process.Tracking is Environment: no cgroups; the server starts without it.',
  );
});

test('limits :: no Limits, no warning about them', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(['UpdateType: Manifest', 'Updates: { ManifestUrl: http://127.0.0.1:9/m }']),
  });
  const r = await check(dir);
  assert.is(r.code, 0, r.stderr);
  assert.not.match(r.stderr, 'Limits');
});

test.run();
