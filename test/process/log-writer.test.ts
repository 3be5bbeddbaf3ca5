import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { boundAppendedLog } from '../../src/process/appended-log.ts';
import { createRotatingLogWriter } from '../../src/process/log-writer.ts';
import { createWriteOutage } from '../../src/process/write-outage.ts';
import { ROOT, tempDir } from '../_support/env.ts';
import { onSmallDisk } from '../_support/tmpfs.ts';

/** A WriteHealth that records what it was told. */
function recorder() {
  const seen = { failing: [] as string[], dropped: 0, resumed: [] as number[] };
  return {
    seen,
    health: {
      onFailing: (code: string) => seen.failing.push(code),
      onDropped: (n: number) => {
        seen.dropped += n;
      },
      onResumed: (n: number) => seen.resumed.push(n),
    },
  };
}

/** A clock the test moves: the retry interval passes when the test says so, not when the machine gets round to it. */
function manualClock() {
  const clock = { ms: 1_000_000, now: () => clock.ms };
  return clock;
}

const onDisk = suite('log-writer :: on a full disk (a real tmpfs)');

const FULL =
  'log-writer :: drops and counts lines on ENOSPC, tries again per retryMs, resumes by itself with a gap marker';
onSmallDisk(onDisk, FULL, 256 * 1024, async (fs) => {
  const dir = join(fs.path, 'logs');
  const r = recorder();
  const clock = manualClock();
  const outage = createWriteOutage(50, r.health, clock.now);
  const w = createRotatingLogWriter(join(dir, 'server.log'), { maxBytes: 1024 * 1024, keep: 2 }, { outage });
  w.writeLine('before');
  fs.fill(0);
  for (let i = 0; i < 5000; i++) w.writeLine(`lost ${i} ${'y'.repeat(100)}`);
  assert.equal(r.seen.failing, ['ENOSPC'], 'told once');
  assert.ok(r.seen.dropped > 0, 'counted');
  assert.is(r.seen.resumed.length, 0);
  const dropped = r.seen.dropped;
  fs.release();
  // Within the retry interval lines are still dropped without touching the disk...
  w.writeLine('too soon');
  assert.is(r.seen.dropped, dropped + 1);
  clock.ms += 80;
  // ...then the next line is written, after a line saying what was lost.
  w.writeLine('after');
  w.close();
  assert.equal(r.seen.resumed, [dropped + 1]);
  const text = await readFile(join(dir, 'server.log'), 'utf8');
  assert.match(text, /^before\n/);
  assert.match(
    text,
    new RegExp(
      `watchdog: ${dropped + 1} line\\(s\\) dropped: server\\.log could not be written \\(ENOSPC\\) ---\\nafter\\n$`,
    ),
  );
  // A line torn by ENOSPC part-way is ended before the marker, which starts a line of its own.
  assert.ok(
    text.split('\n').some((l) => /^--- \S+ watchdog: \d+ line\(s\) dropped/.test(l)),
    'the marker is a line of its own',
  );
});

onDisk.run();

// ---

const folder = suite('log-writer :: the folder goes away');

folder('log-writer :: a removed logs/ is recreated, across rotations, and nothing throws', async () => {
  const tmp = await tempDir('wd-logwriter-');
  try {
    const dir = join(tmp.path, 'logs');
    const r = recorder();
    const clock = manualClock();
    const w = createRotatingLogWriter(
      join(dir, 'server.log'),
      { maxBytes: 200, keep: 2 },
      { outage: createWriteOutage(20, r.health, clock.now) },
    );
    for (let i = 0; i < 20; i++) w.writeLine(`one ${i}`);
    await rm(dir, { recursive: true });
    // The next rotation renames inside a folder that is gone: ENOENT, dropped, not thrown.
    for (let i = 0; i < 40; i++) w.writeLine(`two ${i}`);
    clock.ms += 40;
    for (let i = 0; i < 40; i++) {
      w.writeLine(`three ${i}`);
      clock.ms += 1;
    }
    w.close();
    assert.ok(r.seen.failing.includes('ENOENT'), `told: ${r.seen.failing.join(', ')}`);
    assert.ok(r.seen.resumed.length >= 1, 'resumed');
    assert.match(await readFile(join(dir, 'server.log'), 'utf8'), /three 39\n$/);
  } finally {
    await tmp.cleanup();
  }
});

folder('log-writer :: a log folder that cannot be made drops lines from the start, and never throws', async () => {
  const tmp = await tempDir('wd-logwriter-');
  try {
    writeFileSync(join(tmp.path, 'logs'), 'a file where the folder should be');
    const r = recorder();
    const w = createRotatingLogWriter(join(tmp.path, 'logs', 'server.log'), undefined, {
      retryMs: 10,
      health: r.health,
    });
    for (let i = 0; i < 10; i++) w.writeLine(`x ${i}`);
    w.close();
    assert.is(r.seen.failing.length, 1);
    assert.match(r.seen.failing[0] ?? '', /^E(EXIST|NOTDIR)$/);
    assert.is(r.seen.dropped, 10);
  } finally {
    await tmp.cleanup();
  }
});

folder.run();

// ---

const audit = suite('log-writer :: a file of JSON lines (audit.log)');

audit('log-writer :: rotates by size and keeps `keep` files, the newest lines whole in the current one', async () => {
  const tmp = await tempDir('wd-rotfile-');
  try {
    const file = join(tmp.path, 'logs', 'audit.log');
    const w = createRotatingLogWriter(file, { maxBytes: 300, keep: 3 }, { noteGaps: false, checkMs: 0 });
    for (let i = 0; i < 200; i++) w.writeLine(JSON.stringify({ i }));
    w.close();
    const names = (await readdir(join(tmp.path, 'logs'))).sort();
    assert.equal(names, ['audit.log', 'audit.log.1', 'audit.log.2']);
    for (const n of names) assert.ok((await stat(join(tmp.path, 'logs', n))).size <= 300);
    assert.match(await readFile(file, 'utf8'), /\{"i":199\}\n$/);
  } finally {
    await tmp.cleanup();
  }
});

audit('log-writer :: checkMs 0: a removed file is recreated before the next line, which is not lost', async () => {
  const tmp = await tempDir('wd-rotfile-');
  try {
    const file = join(tmp.path, 'logs', 'audit.log');
    const r = recorder();
    const w = createRotatingLogWriter(file, undefined, { noteGaps: false, checkMs: 0, health: r.health });
    w.writeLine('{"n":1}');
    await rm(join(tmp.path, 'logs'), { recursive: true });
    w.writeLine('{"n":2}');
    w.close();
    assert.is(await readFile(file, 'utf8'), '{"n":2}\n');
    // Reported, with the one line that went into the removed file since the last look.
    assert.equal(r.seen.failing, ['ENOENT']);
    assert.equal(r.seen.resumed, [1]);
  } finally {
    await tmp.cleanup();
  }
});

const AUDIT_FULL =
  'log-writer :: a full disk drops and counts JSON lines; writing resumes once space is back, unmarked';
onSmallDisk(audit, AUDIT_FULL, 64 * 1024, async (fs) => {
  const file = join(fs.path, 'audit.log');
  const r = recorder();
  const clock = manualClock();
  const w = createRotatingLogWriter(
    file,
    { maxBytes: 1024 * 1024, keep: 2 },
    { noteGaps: false, checkMs: 0, outage: createWriteOutage(20, r.health, clock.now) },
  );
  fs.fill(0);
  for (let i = 0; i < 2000; i++) w.writeLine('z'.repeat(200));
  assert.equal(r.seen.failing, ['ENOSPC']);
  assert.ok(r.seen.dropped > 0);
  fs.release();
  clock.ms += 40;
  w.writeLine('back');
  w.close();
  assert.is(r.seen.resumed.length, 1);
  const text = await readFile(file, 'utf8');
  assert.match(text, /(^|\n)back\n$/);
  assert.not.match(text, /watchdog:/);
});

audit.run();

// ---

const appended = suite('appended-log :: a log the server writes itself (PersistServers)');

appended(
  'appended-log :: rotates by copy-and-truncate; when the copy fails it truncates anyway and counts the lines',
  async () => {
    const tmp = await tempDir('wd-appended-');
    try {
      const dir = join(tmp.path, 'logs');
      mkdirSync(dir);
      const r = recorder();
      const bound = boundAppendedLog(dir, { maxBytes: 100, keep: 2 }, createWriteOutage(10, r.health));
      await writeFile(join(dir, 'server.log'), 'a\n'.repeat(60));
      for (let i = 0; i < 60; i++) bound.counted();
      bound.onPoll(120);
      // 120 bytes against a bound of 100: the copy keeps the last 100 (whole lines), the rotated file bounded too.
      assert.is(await readFile(join(dir, 'server.log.1'), 'utf8'), 'a\n'.repeat(50), 'copied, capped');
      assert.is((await readFile(join(dir, 'server.log'), 'utf8')).length, 0, 'truncated');
      assert.is(r.seen.dropped, 0);

      // server.log.1 made a folder: the copy fails, the log is truncated all the same and the lines counted.
      await rm(join(dir, 'server.log.1'));
      mkdirSync(join(dir, 'server.log.1'));
      await writeFile(join(dir, 'server.log'), 'b\n'.repeat(70));
      for (let i = 0; i < 70; i++) bound.counted();
      bound.onPoll(140);
      assert.is((await readFile(join(dir, 'server.log'), 'utf8')).length, 0, 'bounded even so');
      assert.is(r.seen.dropped, 70);
      assert.is(r.seen.failing.length, 1);

      // A working copy ends the outage.
      await rm(join(dir, 'server.log.1'), { recursive: true });
      await writeFile(join(dir, 'server.log'), 'c\n'.repeat(60));
      bound.onPoll(120);
      assert.equal(r.seen.resumed, [70]);
    } finally {
      await tmp.cleanup();
    }
  },
);

const EMFILE_SCRIPT = (src: (p: string) => string) => `
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import { followAppendedLog } from ${src('process/appended-log.ts')};
import { createWriteOutage } from ${src('process/write-outage.ts')};
const dir = process.env.LOG_DIR;
mkdirSync(dir, { recursive: true });
// The server's own descriptor, opened as a PersistServers launch opens it.
const server = openSync(dir + '/server.log', 'a');
writeSync(server, 'a\\n'.repeat(10));
const failing = [];
let dropped = 0;
const outage = createWriteOutage(10, { onFailing: (c) => failing.push(c), onDropped: (n) => { dropped += n; } });
const f = followAppendedLog({ logDir: dir, rotation: { maxBytes: 100, keep: 2 }, outage, onLine: () => {}, startOffset: 0, intervalMs: 3600000 });
f.poll();
const fds = [];
try { for (let i = 0; i < 100000; i++) fds.push(openSync('/dev/null', 'r')); } catch (e) { if (e.code !== 'EMFILE') throw e; }
writeSync(server, 'b\\n'.repeat(100));
f.poll();
const size = fstatSync(server).size;
for (const fd of fds) closeSync(fd);
f.stop();
console.log(JSON.stringify({ size, filled: fds.length, failing, dropped, files: readdirSync(dir).sort() }));
`;

const EMFILE =
  'appended-log :: out of descriptors, the copy cannot be made: the file is emptied through the descriptor held';
if (spawnSync('prlimit', ['--version']).status !== 0) {
  console.log(`skipped "${EMFILE}": prlimit (util-linux) is not installed`);
  appended.skip(EMFILE, () => {});
} else
  appended(EMFILE, async () => {
    const tmp = await tempDir('wd-appended-emfile-');
    try {
      const src = (p: string) => JSON.stringify(pathToFileURL(join(ROOT, 'src', p)).href);
      const run = spawnSync(
        'prlimit',
        [
          '--nofile=256:256',
          '--',
          process.execPath,
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          EMFILE_SCRIPT(src),
        ],
        { cwd: ROOT, encoding: 'utf8', timeout: 20_000, env: { ...process.env, LOG_DIR: join(tmp.path, 'logs') } },
      );
      assert.is(run.status, 0, run.stderr);
      const out = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
      assert.ok(out.filled > 0, 'the descriptors were used up');
      assert.equal(out.failing, ['EMFILE'], 'the copy failed for want of descriptors');
      assert.is(out.size, 0, 'emptied all the same: the file cannot grow while descriptors are out');
      assert.is(out.dropped, 110, 'the lines since the last rotation are counted as dropped');
      assert.equal(out.files, ['server.log']);
    } finally {
      await tmp.cleanup();
    }
  });

appended.run();
