import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { DUMPS_RETENTION, type DumpOptions, dumpProcess } from '../../src/process/dump.ts';
import { isAlive } from '../../src/process/proc-info.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';

const dump = tempSuite('dump', {
  prefix: 'wd-dump-',
  before: async (ctx) => {
    await mkdir(join(ctx.dir, 'bin'));
  },
});

/** dumpProcess options in the test's folder: dumps/ there, the program in its bin/ (beside a fake dumper), no PATH. */
const optsIn = (dir: string, over: Partial<DumpOptions> = {}): DumpOptions => ({
  dumpsDir: join(dir, 'dumps'),
  type: 'Normal',
  timeoutMs: 5000,
  program: join(dir, 'bin', 'Robust.Server'),
  log: captureLog(),
  searchPath: '',
  ...over,
});

/** A stand-in for the .NET runtime's createdump beside the server: records its argv, writes the -f file. */
async function fakeCreatedump(dir: string, body = 'touch "$3"'): Promise<void> {
  const path = join(dir, 'bin', 'createdump');
  await writeFile(path, `#!/bin/sh\necho "$@" > "${join(dir, 'createdump.args')}"\n${body}\n`);
  await chmod(path, 0o755);
}

dump('dump :: createdump beside the program gets the dump type flag, the file name and the pid', async (ctx) => {
  await fakeCreatedump(ctx.dir);
  const log = captureLog();
  const file = await dumpProcess(4242, optsIn(ctx.dir, { type: 'WithHeap', log }));
  assert.ok(file);
  assert.match(file ?? '', /dumps\/dump_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d$/);
  assert.is((await readFile(join(ctx.dir, 'createdump.args'), 'utf8')).trim(), `--withheap -f ${file} 4242`);
  assert.ok(log.lines.some((l) => l.includes('dump written')));
});

dump(
  'dump :: a dump is written with mode 0600 in a folder with mode 0700, whatever mode the dumper gave it',
  async (ctx) => {
    await fakeCreatedump(ctx.dir, 'touch "$3" && chmod 644 "$3"');
    await mkdir(join(ctx.dir, 'dumps'), { mode: 0o755 });
    await chmod(join(ctx.dir, 'dumps'), 0o755); // an existing folder, opened up by the umask or by hand
    const file = await dumpProcess(4242, optsIn(ctx.dir));
    assert.ok(file);
    assert.is((await stat(file ?? '')).mode & 0o777, 0o600, 'the dump, like data.json');
    assert.is((await stat(join(ctx.dir, 'dumps'))).mode & 0o777, 0o700, 'the dumps folder');
  },
);

dump('dump :: no dumper at all → null and a log line saying so', async (ctx) => {
  const log = captureLog();
  const file = await dumpProcess(4242, optsIn(ctx.dir, { log, searchPath: join(ctx.dir, 'empty') }));
  assert.is(file, null);
  assert.ok(log.lines.some((l) => l.startsWith('warn no dump taken') && l.includes('no dumper found')));
});

dump('dump :: a dumper that takes too long is killed at the deadline', async (ctx) => {
  await fakeCreatedump(ctx.dir, 'touch "$3"; exec sleep 30');
  const log = captureLog();
  const t0 = Date.now();
  const file = await dumpProcess(4242, optsIn(ctx.dir, { timeoutMs: 200, log }));
  assert.is(file, null);
  assert.ok(Date.now() - t0 < 10_000);
  assert.ok(log.lines.some((l) => l.includes('dumper took too long')));
  assert.equal(await readdir(join(ctx.dir, 'dumps')), [], 'the half-written dump is removed');
});

dump(
  'dump :: a dumper that forks (gcore runs gdb as a child) is killed with its children at the deadline',
  async (ctx) => {
    // Not exec: the shell waits for sleep, which holds the stderr pipe, as gdb does under the gcore script.
    const pidFile = join(ctx.dir, 'child.pid');
    await fakeCreatedump(ctx.dir, `touch "$3"; sleep 30 & echo $! > "${pidFile}"; wait; echo finished >&2`);
    const log = captureLog();
    const t0 = Date.now();
    const file = await dumpProcess(4242, optsIn(ctx.dir, { timeoutMs: 300, log }));
    const took = Date.now() - t0;
    assert.is(file, null);
    // Held up by the child, it would return when the child's 30 s sleep ends: 15 s only tells that apart.
    assert.ok(took < 15_000, `returned after ${took} ms; the forked child held it up`);
    const child = Number((await readFile(pidFile, 'utf8')).trim());
    await waitFor('the forked child is gone', () => !isAlive(child), 5_000);
    assert.equal(await readdir(join(ctx.dir, 'dumps')), [], 'the half-written dump is removed');
  },
);

dump('dump :: only the newest 3 dumps are kept', async (ctx) => {
  await fakeCreatedump(ctx.dir);
  const dumps = join(ctx.dir, 'dumps');
  await mkdir(dumps);
  for (let i = 0; i < 4; i++) {
    const f = join(dumps, `dump_2020-01-0${i + 1}_00-00-00`);
    await writeFile(f, 'old');
    await utimes(f, 1_600_000_000 + i, 1_600_000_000 + i);
  }
  await writeFile(join(dumps, 'keep-me.txt'), 'not a dump');
  const file = await dumpProcess(
    4242,
    optsIn(ctx.dir, { dumpsDir: dumps, type: 'Full', program: join(ctx.dir, 'bin', 'x') }),
  );
  assert.ok(file);
  const left = (await readdir(dumps)).sort();
  assert.equal(
    left,
    ['dump_2020-01-03_00-00-00', 'dump_2020-01-04_00-00-00', file?.split('/').pop() ?? '', 'keep-me.txt'].sort(),
  );
});

dump(
  'dump :: the dumps kept are bounded by total size too, newest first; the newest stays whatever its size',
  async (ctx) => {
    await fakeCreatedump(ctx.dir, 'head -c 600 /dev/zero > "$3"');
    const dumps = join(ctx.dir, 'dumps');
    await mkdir(dumps);
    for (let i = 0; i < 2; i++) {
      const f = join(dumps, `dump_2020-01-0${i + 1}_00-00-00`);
      await writeFile(f, 'x'.repeat(300));
      await utimes(f, 1_600_000_000 + i, 1_600_000_000 + i);
    }
    const opts = optsIn(ctx.dir, { dumpsDir: dumps, type: 'Full', program: join(ctx.dir, 'bin', 'x') });
    const file = await dumpProcess(4242, { ...opts, retention: { ...DUMPS_RETENTION, maxBytes: 1000 } });
    assert.ok(file);
    // 600 (new) + 300 fits in 1000; the older 300 does not.
    assert.equal((await readdir(dumps)).sort(), ['dump_2020-01-02_00-00-00', file?.split('/').pop() ?? ''].sort());
    const only = await dumpProcess(4242, { ...opts, retention: { ...DUMPS_RETENTION, maxBytes: 100 } });
    assert.equal(
      await readdir(dumps),
      [only?.split('/').pop() ?? ''],
      'a dump larger than the bound is still the one kept',
    );
  },
);

dump('dump :: gcore from gdb dumps a real process when createdump is absent', async (ctx) => {
  const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const pid = sleeper.pid ?? 0;
    const log = captureLog();
    // searchPath unset: the dumpers are looked for on PATH, as the daemon does.
    const opts = optsIn(ctx.dir, { timeoutMs: 20_000, program: join(ctx.dir, 'bin', 'x'), log, searchPath: undefined });
    const file = await dumpProcess(pid, opts);
    const hasGcore = (process.env.PATH ?? '').split(':').some((d) => d !== '' && existsSync(join(d, 'gcore')));
    if (!hasGcore) {
      assert.is(file, null);
      return;
    }
    assert.ok(file, `gcore wrote a dump: ${log.lines.join(' | ')}`);
    assert.match(file ?? '', new RegExp(`dump_[\\d_-]+\\.${pid}$`));
    assert.ok((await stat(file ?? '')).size > 0);
  } finally {
    sleeper.kill('SIGKILL');
  }
});

dump.run();
