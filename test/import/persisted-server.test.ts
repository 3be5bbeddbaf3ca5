import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { checkPersistedServer, inspectRow } from '../../src/import/instance-import.ts';
import { isAlive, readProcessStartTime } from '../../src/process/proc-info.ts';
import { findLeftover } from '../../src/supervisor/instance-start.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import { instanceFor } from '../_support/fixture-servers.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

/** Real processes checked against /proc, as the import does with a pid from the real watchdog's data.db. */
interface Ctx {
  dir: string;
  procs: ChildProcess[];
}
const s = tempSuite('import/persisted-server', {
  prefix: 'wd-import-',
  ctx: { procs: [] as ChildProcess[] },
  before: (ctx) => {
    ctx.procs = [];
  },
  after: (ctx) => {
    for (const p of ctx.procs) p.kill('SIGKILL');
  },
});

function start(ctx: Ctx, program: string, args: string[]): number {
  const proc = spawn(program, args, { stdio: 'ignore' });
  ctx.procs.push(proc);
  if (proc.pid === undefined) throw new Error(`could not start ${program}`);
  return proc.pid;
}

/** The clock ticks of a `ticks@boot` start time (NaN for none). */
const ticksOf = (t: string | null) => Number(t?.split('@')[0] ?? Number.NaN);

/**
 * A start time later than every process started so far (the kernel counts in clock ticks of 10 ms): the "this daemon
 * started" mark. Markers are started until one has a later tick than every earlier process still there.
 */
async function now(ctx: Ctx): Promise<string> {
  const earlier = await Promise.all(ctx.procs.map((p) => readProcessStartTime(p.pid ?? 0).then(ticksOf)));
  const latest = Math.max(0, ...earlier.filter((t) => !Number.isNaN(t)));
  return waitFor(
    'a process start time a clock tick later than the others',
    async () => {
      const t = await readProcessStartTime(start(ctx, 'sleep', ['30']));
      return ticksOf(t) > latest ? t : undefined;
    },
    10_000,
    5,
  );
}

/** A copy of `sleep` installed as the instance's program: a binary, matched through /proc/<pid>/exe. */
async function binary(ctx: Ctx): Promise<string> {
  await mkdir(join(ctx.dir, 'bin'));
  const program = join(ctx.dir, 'bin/Robust.Server');
  await copyFile('/bin/sleep', program);
  return program;
}

s(
  'persisted :: a binary server (its executable is the program) is verified; its arguments and start time recorded',
  async (ctx) => {
    const program = await binary(ctx);
    // GNU sleep adds up its arguments: extra ones keep it running.
    const pid = start(ctx, program, ['60', '1', '2']);
    const check = await checkPersistedServer(pid, program, await now(ctx));
    assert.ok(check.ok, JSON.stringify(check));
    if (!check.ok) return;
    assert.is(check.server.pid, pid);
    assert.is(check.server.startTime, await readProcessStartTime(pid));
    assert.equal(check.server.args, ['60', '1', '2']);
    // The process started within this test, not at boot nor in the future (the boot time is in whole seconds).
    const age = Date.now() - Date.parse(check.server.startedAt);
    assert.ok(age >= -1000 && age < 60_000, `started ${age} ms ago`);
  },
);

s('persisted :: a script server run by its interpreter (the program is argv[1]) is verified', async (ctx) => {
  const script = join(ctx.dir, 'server.js');
  await writeFile(script, 'setTimeout(() => {}, 60_000);\n');
  const pid = start(ctx, process.execPath, [script, '--cvar', 'a=b']);
  const check = await checkPersistedServer(pid, script, await now(ctx));
  assert.ok(check.ok, JSON.stringify(check));
  if (check.ok) assert.equal(check.server.args, ['--cvar', 'a=b']);
});

s('persisted :: a program reached through a symbolic link matches either way', async (ctx) => {
  const real = await binary(ctx);
  const link = join(ctx.dir, 'linked-server');
  await symlink(real, link);
  const byLink = start(ctx, link, ['60']);
  const byReal = start(ctx, real, ['61']);
  const before = await now(ctx);
  assert.ok((await checkPersistedServer(byLink, link, before)).ok, 'started by its link, configured as the link');
  assert.ok((await checkPersistedServer(byReal, link, before)).ok, 'started by its real path, configured as the link');
});

s('persisted :: a pid that is another program is refused, and left running', async (ctx) => {
  const program = await binary(ctx);
  const other = start(ctx, 'sleep', ['60']);
  const check = await checkPersistedServer(other, program, await now(ctx));
  assert.not.ok(check.ok);
  if (!check.ok) assert.match(check.reason, /runs \/.*sleep, not the instance's program/);
  assert.ok(isAlive(other));
});

s('persisted :: a pid that is gone is refused', async (ctx) => {
  const program = await binary(ctx);
  const proc = spawn(program, ['0']);
  await new Promise((r) => proc.once('exit', r));
  const check = await checkPersistedServer(proc.pid!, program, await now(ctx));
  assert.equal(check, { ok: false, reason: 'no process has that pid any more' });
});

s(
  'persisted :: the right program started after this watchdog is refused (the old one cannot have left it)',
  async (ctx) => {
    const program = await binary(ctx);
    const before = await now(ctx);
    await now(ctx); // a later tick: the program below starts after `before`
    const pid = start(ctx, program, ['60']);
    const check = await checkPersistedServer(pid, program, before);
    assert.not.ok(check.ok);
    if (!check.ok) assert.match(check.reason, /started after this watchdog did/);
  },
);

s(
  'inspect :: PersistServers on → adopt, with the persisted token as secret; the record passes the adoption check',
  async (ctx) => {
    const program = await binary(ctx);
    const pid = start(ctx, program, ['60', '3']);
    const instance = instanceFor(ctx.dir, program);
    const row = {
      key: 'alpha',
      revision: 'r7',
      persistedToken: 'persisted-secret',
      persistedPid: pid,
      persistedSystemdUnit: null,
    };
    const found = await inspectRow(row, instance, { persistServers: true, before: await now(ctx) });
    assert.is(found.server, 'adopt');
    assert.is(found.revision, 'r7');
    assert.equal(
      {
        pid: found.launch?.pid,
        program: found.launch?.program,
        args: found.launch?.args,
        secret: found.launch?.secret,
      },
      { pid, program, args: ['60', '3'], secret: 'persisted-secret' },
    );
    const leftover = await findLeftover(found.launch, recordingLogger());
    assert.ok(leftover, 'the existing adoption path recognises the imported record');
    assert.is(leftover?.pid, pid);
  },
);

s('inspect :: PersistServers off → shut-down; no token or no pid → none', async (ctx) => {
  const program = await binary(ctx);
  const pid = start(ctx, program, ['60']);
  const instance = instanceFor(ctx.dir, program);
  const before = await now(ctx);
  const row = { key: 'alpha', revision: null, persistedToken: 't', persistedPid: pid, persistedSystemdUnit: null };
  assert.is((await inspectRow(row, instance, { persistServers: false, before })).server, 'shut-down');
  const noToken = await inspectRow({ ...row, persistedToken: null }, instance, { persistServers: true, before });
  assert.equal([noToken.server, noToken.launch], ['none', null]);
  assert.match(noToken.reason ?? '', /no check-in secret was persisted/);
  const noPid = await inspectRow({ ...row, persistedPid: null }, instance, { persistServers: true, before });
  assert.equal([noPid.server, noPid.launch, noPid.reason], ['none', null, null]);
});

s.run();
