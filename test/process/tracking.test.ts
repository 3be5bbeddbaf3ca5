import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { inCgroup } from '../../src/process/cgroup.ts';
import { isAlive } from '../../src/process/proc-info.ts';
import { detectTracking, type LaunchTrack, MARKER_ENV, type ProcessTracking } from '../../src/process/tracking.ts';
import { waitFor } from '../_support/env.ts';
import { killGroup } from '../_support/procs.ts';

/**
 * A launch whose leader starts a child in a session of its own (setsid) and exits: `end` must find and kill the child
 * in both modes, and in cgroup mode remove the launch's cgroup.
 */

/**
 * Starts the launch's leader (in its cgroup when it has one), which starts a child in a session of its own; once the
 * child runs, kills the leader (a crash) and resolves with the child's pid.
 */
async function launchEscaper(track: LaunchTrack): Promise<number> {
  const code =
    "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { detached: true, stdio: 'ignore' }); process.stdout.write(String(c.pid)); setTimeout(() => {}, 30000);";
  const { file, args } = track.cgroup
    ? inCgroup(track.cgroup, process.execPath, ['-e', code])
    : { file: process.execPath, args: ['-e', code] };
  const leader = spawn(file, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, [MARKER_ENV]: track.marker },
  });
  let out = '';
  leader.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const pid = await waitFor('the escaped child', () => Number(out) || undefined, 5000);
  const exited = new Promise((r) => leader.once('exit', r));
  leader.kill('SIGKILL');
  await exited;
  assert.ok(isAlive(pid), `the escaped child outlives its leader (${pid})`);
  return pid;
}

const noCgroups = await (async () => {
  const t = await detectTracking({ workDir: '/tracking-test-probe', forceMarker: false, killMs: () => 1000 });
  await t.close();
  return t.mode === 'cgroup' ? null : t.description;
})();

for (const mode of ['cgroup', 'marker'] as const) {
  const test = suite<{ tracking: ProcessTracking | null; pids: number[] }>(`process :: tracking (${mode})`, {
    tracking: null,
    pids: [],
  });
  const it = mode === 'cgroup' && noCgroups !== null ? test.skip : test;
  if (it === test.skip) console.log(`tracking: cgroup mode skipped: ${noCgroups}`);
  test.before(async (ctx) => {
    if (it === test.skip) return;
    ctx.tracking = await detectTracking({
      workDir: `/tracking-test-${mode}-${process.pid}`,
      forceMarker: mode === 'marker',
      killMs: () => 2000,
    });
  });
  test.after(async (ctx) => {
    for (const pid of ctx.pids) killGroup(pid);
    await ctx.tracking?.close();
  });

  it('tracking :: a child that left the session dies with its launch', async (ctx) => {
    const tracking = ctx.tracking!;
    assert.is(tracking.mode, mode);
    const track = await tracking.begin('k');
    assert.is(track.cgroup !== null, mode === 'cgroup');
    const child = await launchEscaper(track);
    ctx.pids.push(child);
    assert.ok(await tracking.owns(child, 'k'), 'it is ours');
    assert.not.ok(await tracking.owns(child, 'other'), "it is not another instance's");
    assert.equal(await tracking.end(track), [child]);
    await waitFor('the child gone', () => !isAlive(child), 10_000);
    if (track.cgroup) assert.not.ok(existsSync(track.cgroup), 'the cgroup is removed');
  });

  it('tracking :: a sweep before a relaunch ends what earlier launches left', async (ctx) => {
    const tracking = ctx.tracking!;
    const first = await launchEscaper(await tracking.begin('k'));
    const second = await launchEscaper(await tracking.begin('k'));
    ctx.pids.push(first, second);
    const other = await launchEscaper(await tracking.begin('other'));
    ctx.pids.push(other);
    assert.equal((await tracking.sweep('k')).sort(), [first, second].sort());
    await waitFor('both gone', () => !isAlive(first) && !isAlive(second), 10_000);
    assert.ok(isAlive(other), "another instance's process is left alone");
    await tracking.sweep('other');
  });

  if (mode === 'cgroup') {
    it("tracking :: a sweep scans for the instance's marker once per daemon, not before every relaunch", async () => {
      const tracking = await detectTracking({
        workDir: `/tracking-test-scan-${process.pid}`,
        forceMarker: false,
        killMs: () => 2000,
      });
      const base = /\((.+)\)/.exec(tracking.description)![1]!;
      const pids: number[] = [];
      try {
        // Marked but in no cgroup of ours: what a daemon that tracked by marker alone left.
        const before = await launchEscaper({ marker: (await tracking.begin('k')).marker, cgroup: null });
        pids.push(before);
        assert.equal(await tracking.sweep('k'), [before], 'the first sweep finds it by its marker');
        await waitFor('it is gone', () => !isAlive(before), 10_000);
        const inGroup = await launchEscaper(await tracking.begin('k'));
        const outside = await launchEscaper({ marker: (await tracking.begin('k')).marker, cgroup: null });
        pids.push(inGroup, outside);
        assert.equal(await tracking.sweep('k'), [inGroup], 'later sweeps take the cgroups alone');
        assert.ok(isAlive(outside), 'no second scan of /proc');
        // A launch whose cgroup cannot be made (here the instance's cgroup may have no children) is tracked by its
        // marker alone, so the sweep after it scans again.
        await tracking.sweep('f');
        mkdirSync(join(base, 'f'));
        writeFileSync(join(base, 'f', 'cgroup.max.descendants'), '0');
        const track = await tracking.begin('f');
        assert.is(track.cgroup, null, 'no cgroup for it');
        const unjoined = await launchEscaper(track);
        pids.push(unjoined);
        assert.equal(await tracking.sweep('f'), [unjoined], 'the next sweep finds it by its marker');
      } finally {
        for (const pid of pids) killGroup(pid);
        await tracking.close();
      }
    });

    it('tracking :: an empty cgroup left by an earlier daemon is removed at start; a populated one stays', async (ctx) => {
      const base = /\((.+)\)/.exec(ctx.tracking!.description)![1]!;
      const empty = join(base, 'k', 'stale');
      mkdirSync(empty, { recursive: true });
      const track = await ctx.tracking!.begin('k');
      const child = await launchEscaper(track);
      ctx.pids.push(child);
      await detectTracking({
        workDir: `/tracking-test-${mode}-${process.pid}`,
        forceMarker: false,
        killMs: () => 2000,
      });
      assert.not.ok(existsSync(empty), 'the empty one is gone');
      assert.ok(existsSync(track.cgroup!) && isAlive(child), 'the populated one stays');
      await ctx.tracking!.end(track);
    });
  }

  test.run();
}
