import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isAlive, readCmdline, readProcessStartTime, verifyProcess } from '../../src/process/proc-info.ts';
import { spawnServer } from '../../src/process/spawn.ts';
import { tempDir, waitFor } from '../_support/env.ts';
import { apiUp, FIXTURES, instanceFor, killAll, launchFixture, specFor, track } from '../_support/fixture-servers.ts';

const info = suite('proc-info');
const children: ChildProcess[] = [];
info.after.each(() => {
  killAll();
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

function sleeper(args: string[] = []): ChildProcess {
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', ...args], { stdio: 'ignore' });
  children.push(c);
  return c;
}

info('proc-info :: start time is stable for a process and differs between processes', async () => {
  // Two processes started in one clock tick share a start time (pids tell them apart); this process started long
  // before `a` (it loaded this suite first), so its start time must differ.
  const a = sleeper();
  const b = sleeper();
  const ta = await readProcessStartTime(a.pid ?? 0);
  assert.match(ta ?? '', /^\d+@[0-9a-f-]+$/);
  assert.is(await readProcessStartTime(a.pid ?? 0), ta);
  const own = await readProcessStartTime(process.pid);
  assert.ok(own && own !== ta);
  assert.ok(b.pid !== a.pid);
  assert.is(await readProcessStartTime(2 ** 22 + 7), null, 'no such pid');
});

info('proc-info :: readCmdline returns argv as the kernel holds it', async () => {
  const c = sleeper(['one arg', '']);
  const argv = await waitFor('cmdline', () => readCmdline(c.pid ?? 0));
  assert.equal(argv.slice(-2), ['one arg', '']);
  assert.is(argv[0], process.execPath);
  assert.is(await readCmdline(2 ** 22 + 7), null);
});

info('proc-info :: isAlive is false for exited processes, zombies included', async () => {
  const c = sleeper();
  const pid = c.pid ?? 0;
  assert.ok(isAlive(pid));
  c.kill('SIGKILL');
  await new Promise((r) => c.once('exit', r));
  assert.not.ok(isAlive(pid));
  assert.not.ok(isAlive(0));
  assert.not.ok(isAlive(-5));
  assert.ok(isAlive(process.pid));
  // A zombie: `sleep 1` exits after its parent shell exec'd into `sleep 30`, which never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(parent);
  let out = '';
  parent.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const zombie = await waitFor('zombie pid', () => Number(out.trim()) || 0);
  await waitFor('child exited', async () => (await readFile(`/proc/${zombie}/stat`, 'utf8')).includes(') Z '));
  assert.not.throws(() => process.kill(zombie, 0), 'signal probes still see a zombie');
  assert.not.ok(isAlive(zombie));
});

info(
  'proc-info :: verifyProcess accepts the launched server and refuses a wrong start time, wrong args or a dead pid',
  async () => {
    const t = await tempDir('wd-procinfo-');
    try {
      const { proc, spec, port } = await launchFixture(t.path, 'echo-env.mjs');
      // The fixture starts through `#!/usr/bin/env node`: until env has exec'd node, a read of /proc/<pid>/cmdline
      // can fall inside that second exec. Once the server answers, node runs it.
      await waitFor('the fixture answers', () => apiUp(port));
      const startTime = proc.startTime ?? '';
      assert.ok(startTime);
      assert.ok(await verifyProcess(proc.pid, { startTime, args: spec.args }), 'launch args');
      assert.ok(
        await verifyProcess(proc.pid, { startTime, args: [spec.program, ...spec.args] }),
        'program + args (shebang script)',
      );
      // A reused pid: same number, different start time.
      const [ticks, boot] = startTime.split('@');
      assert.not.ok(await verifyProcess(proc.pid, { startTime: `${Number(ticks) - 1}@${boot}`, args: spec.args }));
      assert.not.ok(await verifyProcess(proc.pid, { startTime: `${ticks}@another-boot`, args: spec.args }));
      // Another process: right start time of nothing, wrong command line.
      assert.not.ok(
        await verifyProcess(proc.pid, { startTime, args: [...spec.args.slice(0, -1), join(t.path, 'other')] }),
      );
      assert.not.ok(await verifyProcess(proc.pid, { startTime, args: ['/some/other/program', ...spec.args, 'extra'] }));
      const other = sleeper();
      const otherStart = await readProcessStartTime(other.pid ?? 0);
      assert.not.ok(
        await verifyProcess(other.pid ?? 0, { startTime: otherStart ?? '', args: spec.args }),
        'a different program',
      );
      proc.kill();
      await proc.exited;
      assert.not.ok(await verifyProcess(proc.pid, { startTime, args: spec.args }), 'gone');
    } finally {
      await t.cleanup();
    }
  },
);

info('proc-info :: verifyProcess sees through a wrapper script that execs the real server', async () => {
  const t = await tempDir('wd-procinfo-');
  try {
    const wrapper = join(t.path, 'server.sh');
    await writeFile(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${join(FIXTURES, 'echo-env.mjs')}" "$@"\n`);
    await chmod(wrapper, 0o755);
    const spec = specFor(instanceFor(t.path, wrapper), {
      baseUrl: 'http://127.0.0.1:9/',
      env: { ...process.env, FIXTURE_LIFETIME_MS: '60000' },
    });
    const proc = await spawnServer(spec, { logDir: join(t.path, 'logs'), persist: false });
    track(proc.pid);
    const argv = await waitFor('exec done', async () =>
      (await readCmdline(proc.pid))?.[0] === process.execPath ? true : null,
    );
    assert.ok(argv);
    // The start time was read at spawn, before the exec: exec keeps the process, so it still matches.
    const startTime = proc.startTime ?? '';
    assert.ok(await verifyProcess(proc.pid, { startTime, args: [wrapper, ...spec.args] }));
    assert.ok(await verifyProcess(proc.pid, { startTime, args: spec.args }));
    proc.kill();
    await proc.exited;
  } finally {
    await t.cleanup();
  }
});

info.run();
