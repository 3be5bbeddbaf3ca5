import { spawnSync } from 'node:child_process';
import { appendFile, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import {
  copyCapped,
  copyTruncate,
  LineSplitter,
  logPath,
  pruneRotated,
  rotateIfFull,
} from '../../src/process/log-file.ts';
import { followLog, readLastLines } from '../../src/process/log-tail.ts';
import { createRotatingLogWriter } from '../../src/process/log-writer.ts';
import { NotRegularFileError } from '../../src/regular-file.ts';
import { tempSuite, waitFor } from '../_support/env.ts';

const logs = tempSuite('log-file', { prefix: 'wd-logs-' });

logs('log-file :: LineSplitter handles CRLF, split UTF-8 and a trailing partial line', () => {
  const s = new LineSplitter();
  const euro = Buffer.from('€', 'utf8');
  assert.equal(s.push(Buffer.from('a\r\nb')), ['a']);
  assert.equal(s.push(Buffer.concat([Buffer.from('\n'), euro.subarray(0, 1)])), ['b']);
  assert.equal(s.push(Buffer.concat([euro.subarray(1), Buffer.from('\nrest')])), ['€']);
  assert.is(s.flush(), 'rest');
  assert.is(s.flush(), null);
  const long = new LineSplitter().push('x'.repeat(200 * 1024));
  assert.ok(long.length >= 3, 'an endless line is cut into bounded pieces');
});

logs('log-file :: the writer rotates at maxBytes and keeps `keep` files', async (ctx) => {
  const w = createRotatingLogWriter(logPath(ctx.dir), { maxBytes: 100, keep: 3 });
  for (let i = 0; i < 50; i++) w.writeLine(`line ${String(i).padStart(3, '0')}`); // 9 bytes each
  w.close();
  assert.equal((await readdir(ctx.dir)).sort(), ['server.log', 'server.log.1', 'server.log.2']);
  const newest = await readFile(join(ctx.dir, 'server.log'), 'utf8');
  assert.match(newest, /line 049\n$/);
  assert.ok(Buffer.byteLength(newest) <= 100);
  // Oldest lines were dropped; the three files together hold the last lines in order.
  const all = (await readLastLines(ctx.dir, 1000)).lines;
  assert.is(all.at(-1), 'line 049');
  assert.ok(all.length < 50 && all.length >= 22);
  assert.equal(all, all.slice().sort());
});

logs(
  'log-file :: Retention.Logs removes rotated logs sooner than the cap, oldest first, numbers in a row',
  async (ctx) => {
    const day = 86_400_000;
    const now = Date.now();
    // server.log.1 … .6, a day older each, 10 bytes each.
    for (let i = 1; i <= 6; i++) {
      const file = join(ctx.dir, `server.log.${i}`);
      await writeFile(file, `${String(i).padStart(9, '0')}\n`);
      await utimes(file, (now - i * day) / 1000, (now - i * day) / 1000);
    }
    const files = async () => (await readdir(ctx.dir)).sort();
    // Keep 2, and anything younger than 3.5 days: .1 … .3.
    pruneRotated(logPath(ctx.dir), 10, { keep: 2, keepDays: 3.5, maxBytes: 1e9 }, now);
    assert.equal(await files(), ['server.log.1', 'server.log.2', 'server.log.3']);
    // Then at most 25 bytes together: the oldest goes.
    pruneRotated(logPath(ctx.dir), 10, { keep: 2, keepDays: 3.5, maxBytes: 25 }, now);
    assert.equal(await files(), ['server.log.1', 'server.log.2']);
    // Keep 0 still keeps the newest; no rule removes nothing.
    pruneRotated(logPath(ctx.dir), 10, undefined, now);
    assert.equal(await files(), ['server.log.1', 'server.log.2']);
    pruneRotated(logPath(ctx.dir), 10, { keep: 0, keepDays: 0, maxBytes: 0 }, now);
    assert.equal(await files(), ['server.log.1']);
  },
);

logs('log-file :: the writer applies Retention.Logs at each rotation', async (ctx) => {
  const w = createRotatingLogWriter(logPath(ctx.dir), {
    maxBytes: 100,
    keep: 10,
    retention: { keep: 2, keepDays: 0, maxBytes: 1e9 },
  });
  for (let i = 0; i < 100; i++) w.writeLine(`line ${String(i).padStart(3, '0')}`);
  w.close();
  const files = (await readdir(ctx.dir)).sort();
  const times = await Promise.all(files.map(async (f) => `${f} ${(await stat(join(ctx.dir, f))).mtimeMs}`));
  assert.equal(files, ['server.log', 'server.log.1', 'server.log.2'], times.join(', '));
});

logs('log-file :: launch-time rotation only when full; copyTruncate empties in place', async (ctx) => {
  await writeFile(join(ctx.dir, 'server.log'), 'small\n');
  assert.is(rotateIfFull(logPath(ctx.dir), { maxBytes: 100, keep: 3 }), false);
  await writeFile(join(ctx.dir, 'server.log'), 'x'.repeat(100));
  assert.is(rotateIfFull(logPath(ctx.dir), { maxBytes: 100, keep: 3 }), true);
  assert.equal((await readdir(ctx.dir)).sort(), ['server.log.1']);
  await writeFile(join(ctx.dir, 'server.log'), 'current\n');
  copyTruncate(logPath(ctx.dir), 3);
  assert.is(await readFile(join(ctx.dir, 'server.log'), 'utf8'), '');
  assert.is(await readFile(join(ctx.dir, 'server.log.1'), 'utf8'), 'current\n');
  assert.is((await readFile(join(ctx.dir, 'server.log.2'), 'utf8')).length, 100);
});

logs(
  'log-file :: a file grown past its bound is rotated as its last maxBytes, whole lines, with a note',
  async (ctx) => {
    const line = (i: number) => `line ${String(i).padStart(5, '0')} ${'x'.repeat(50)}\n`; // 62 bytes
    const text = Array.from({ length: 200 }, (_, i) => line(i)).join('');
    await writeFile(join(ctx.dir, 'server.log'), text);
    assert.is(rotateIfFull(logPath(ctx.dir), { maxBytes: 4096, keep: 3 }), true);
    const rotated = await readFile(join(ctx.dir, 'server.log.1'), 'utf8');
    assert.ok(Buffer.byteLength(rotated) <= 4096, `within the bound (${Buffer.byteLength(rotated)} bytes)`);
    assert.ok(Buffer.byteLength(rotated) > 4096 - 2 * 62 - 200, 'as much as fits');
    const [note, ...kept] = rotated.split('\n').slice(0, -1);
    assert.match(note!, /watchdog: \d+ bytes cut from the start/);
    assert.equal(kept, text.split('\n').slice(-kept.length - 1, -1), 'whole lines, the newest, in order');
    assert.equal((await readdir(ctx.dir)).sort(), ['server.log.1']);

    // copyTruncate caps its copy the same way; a file within the bound is copied as it is.
    await writeFile(join(ctx.dir, 'server.log'), text);
    copyTruncate(logPath(ctx.dir), 3, 4096);
    assert.ok((await readFile(join(ctx.dir, 'server.log.1'), 'utf8')).length <= 4096);
    assert.is(await readFile(join(ctx.dir, 'server.log'), 'utf8'), '');
    assert.is(await readFile(join(ctx.dir, 'server.log.2'), 'utf8'), rotated);
  },
);

logs('log-file :: followLog sees appends, rotation by rename and truncation', async (ctx) => {
  const seen: string[] = [];
  const w = createRotatingLogWriter(logPath(ctx.dir), { maxBytes: 60, keep: 2 });
  w.writeLine('before follow');
  const f = followLog(ctx.dir, (l) => seen.push(l), { intervalMs: 20 });
  try {
    for (let i = 0; i < 12; i++) {
      const line = `n${i} padding-padding`; // 20 bytes: rotates every 3 lines
      w.writeLine(line);
      // Each line seen before the next: the follower meets one rename at a time, as a daemon polling faster
      // than its server rotates does.
      await waitFor(line, () => seen.includes(line), 10_000);
    }
    assert.not.ok(seen.includes('before follow'), 'starts at the end');
    assert.equal(
      seen,
      Array.from({ length: 12 }, (_, i) => `n${i} padding-padding`),
    );
    copyTruncate(logPath(ctx.dir), 2);
    w.writeLine('after truncate');
    await waitFor('line after truncation', () => seen.includes('after truncate'));
  } finally {
    f.stop();
    w.close();
  }
});

logs('log-file :: after copy-and-truncate at a poll, a writer faster than the next poll loses no line', async (ctx) => {
  const path = join(ctx.dir, 'server.log');
  await writeFile(path, '');
  const seen: string[] = [];
  let rotate = false;
  const f = followLog(ctx.dir, (l) => seen.push(l), {
    intervalMs: 60_000, // polled by hand below
    followRenames: false,
    onPoll(_size, file) {
      if (!rotate) return;
      rotate = false;
      copyTruncate(logPath(ctx.dir), 2);
      file.emptied();
    },
  });
  try {
    await appendFile(path, 'a1\na2\n');
    rotate = true;
    f.poll();
    // More than the offset reached before the truncation: only `emptied()` tells the follower to start over.
    await appendFile(path, 'b1 longer than before\nb2 longer than before\n');
    f.poll();
    assert.equal(seen, ['a1', 'a2', 'b1 longer than before', 'b2 longer than before']);
  } finally {
    f.stop();
  }
});

logs('log-file :: followLog reads a file that appears later from its start', async (ctx) => {
  const seen: string[] = [];
  const f = followLog(ctx.dir, (l) => seen.push(l), { intervalMs: 20 });
  try {
    f.poll(); // a poll that finds no file, as the timer's would
    assert.is(seen.length, 0);
    await writeFile(join(ctx.dir, 'server.log'), 'first\nsecond\npartial');
    await waitFor('both lines', () => seen.length === 2);
    assert.equal(seen, ['first', 'second']);
  } finally {
    f.stop();
  }
  assert.equal(seen, ['first', 'second', 'partial'], 'stop() passes on the unterminated last line');
});

logs('log-file :: a rotation copy refuses a named pipe at either end, never waiting on it', async (ctx) => {
  if (spawnSync('mkfifo', ['--version']).error !== undefined) return console.log('  (skipped: no mkfifo)');
  const log = join(ctx.dir, 'server.log');
  const pipe = join(ctx.dir, 'pipe');
  await writeFile(log, 'a line\n');
  spawnSync('mkfifo', [pipe]);
  // Nobody reads the pipe: a copy that opened it by path (copyFileSync) would wait for a reader for ever.
  assert.throws(
    () => copyCapped(log, pipe, 1_000_000),
    (err: unknown) => err instanceof NotRegularFileError,
  );
  assert.throws(
    () => copyCapped(pipe, join(ctx.dir, 'copy'), 1_000_000),
    (err: unknown) => err instanceof NotRegularFileError,
  );
  // A plain copy still is one, whole.
  assert.is(copyCapped(log, join(ctx.dir, 'copy'), 1_000_000), 0);
  assert.is(await readFile(join(ctx.dir, 'copy'), 'utf8'), 'a line\n');
});

logs.run();
