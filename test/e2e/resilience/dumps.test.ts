import { chmod, mkdir, open, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { killGroup, waitStatus } from './_support/daemon-crash.ts';

const test = suite('e2e :: dumps before the hang kill (DumpOnTimeout)');

const TOKEN = 'tok';

const pids = new Set<number>();
const daemons: RunningDaemon[] = [];
const cleanups: Array<() => Promise<void>> = [];

/**
 * A hung server that never checks in: killed as hung TimeoutSeconds after launch. A shell `sleep` rather than
 * a node fixture, because gcore of a node process writes ~800 MB; of `sleep`, about one.
 */
async function hungServer(dir: string): Promise<string> {
  const path = join(dir, 'hung.sh');
  await writeFile(path, '#!/bin/sh\nexec sleep 300\n');
  await chmod(path, 0o755);
  return path;
}

async function setup(dumpTimeoutSeconds: number, env: Record<string, string> = {}) {
  const tmp = await tempDir('wd-dumps-');
  cleanups.push(tmp.cleanup);
  const yaml = testConfig({
    extra: `  DumpTimeoutSeconds: ${dumpTimeoutSeconds}`,
    instances: [{ key: 'h', port: await freePort(), runCommand: await hungServer(tmp.path), timeoutSeconds: 2 }],
  }).replace('DumpOnTimeout: false', 'DumpOnTimeout: true');
  const dumps = join(tmp.path, 'instances/h/dumps');
  await mkdir(dumps, { recursive: true });
  return { tmp, yaml, dumps, env };
}

/**
 * Starts a daemon on the hung server and waits for its launch, then for `event` in the daemon log (within
 * `eventMs`) and the relaunch that follows the hang kill; every server pid is kept for the after hook.
 */
async function hangCycle(
  s: Awaited<ReturnType<typeof setup>>,
  what: string,
  event: RegExp,
  eventMs: number,
  env?: Record<string, string>,
) {
  const d = await startDaemon(s.yaml, { dir: s.tmp.path, env });
  daemons.push(d);
  const first = await waitStatus(d, 'h', TOKEN, 'launched', (st) => st.pid !== null);
  pids.add(first.pid!);
  await waitFor(what, () => event.test(d.log()), eventMs);
  const next = await waitStatus(
    d,
    'h',
    TOKEN,
    'killed and relaunched',
    (st) => st.pid !== null && st.pid !== first.pid,
    20_000,
  );
  pids.add(next.pid!);
  return { d, first };
}

test.after(async () => {
  for (const d of daemons) await d.stop();
  for (const pid of pids) killGroup(pid);
  for (const c of cleanups) await c();
});

test('dumps :: gcore writes a core of the hung server before the kill; only the newest 3 dumps are kept', async () => {
  const s = await setup(30);
  // Three older dumps: the first new one must push out the oldest.
  for (const [i, name] of [
    'dump_2000-01-01_00-00-00',
    'dump_2000-01-02_00-00-00',
    'dump_2000-01-03_00-00-00',
  ].entries()) {
    await writeFile(join(s.dumps, name), 'old');
    await utimes(join(s.dumps, name), 946_684_800 + i * 86_400, 946_684_800 + i * 86_400);
  }
  const { d, first } = await hangCycle(s, 'a dump written', /\[watchdog:h\] dump written/, 30_000);
  assert.is(await d.stop(), 0);

  const names = (await readdir(s.dumps)).sort();
  assert.is(names.length, 3, `newest 3 kept: ${names.join(', ')}`);
  assert.not.ok(names.includes('dump_2000-01-01_00-00-00'), 'the oldest was removed');
  const core = names.find((n) => n.endsWith(`.${first.pid}`));
  assert.ok(core, `a core of the hung server (pid ${first.pid}): ${names.join(', ')}`);
  assert.match(core!, /^dump_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d\.\d+$/);
  const fh = await open(join(s.dumps, core!), 'r');
  const magic = Buffer.alloc(4);
  await fh.read(magic, 0, 4, 0);
  await fh.close();
  assert.equal([...magic], [0x7f, 0x45, 0x4c, 0x46], 'an ELF core file: gcore attached while the server still ran');
});

test('dumps :: a dumper that takes too long is killed after DumpTimeoutSeconds, and the hang kill follows regardless', async () => {
  const bin = await tempDir('wd-fakebin-');
  cleanups.push(bin.cleanup);
  const fakeBin = bin.path;
  // Stands in for a gdb that never finishes (a real one can hang on a process in D state).
  await writeFile(join(fakeBin, 'gcore'), '#!/bin/sh\nexec sleep 60\n');
  await chmod(join(fakeBin, 'gcore'), 0o755);
  const s = await setup(1);
  const { d } = await hangCycle(s, 'the dumper killed at its deadline', /dumper took too long; killed it/, 20_000, {
    PATH: `${fakeBin}:${process.env.PATH ?? ''}`,
  });
  assert.is((await readdir(s.dumps)).length, 0, 'no half-written dump left');
  assert.not.match(d.log(), /dump written/);
});

test.run();
