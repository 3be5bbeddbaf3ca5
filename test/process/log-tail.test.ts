import { appendFileSync, existsSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { logPath, rotateLogs } from '../../src/process/log-file.ts';
import { followLines, followLog, readLastLines } from '../../src/process/log-tail.ts';
import { tempSuite, waitFor } from '../_support/env.ts';

/** A suite whose `dir` is a fresh, empty logs folder inside the test's temp folder (removed with it). */
const logsSuite = (name: string, prefix: string) =>
  tempSuite(name, {
    prefix,
    before: (ctx) => {
      ctx.dir = join(ctx.dir, 'logs');
      mkdirSync(ctx.dir);
    },
  });
const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);

const tail = logsSuite('readLastLines :: the last N lines of server.log', 'wd-cli-log-');

tail('log-tail :: the last N complete lines, and the byte offset they end at', async ({ dir }) => {
  writeFileSync(logPath(dir), numbered(1, 100).join('\n') + '\n');
  const t = await readLastLines(dir, 3);
  assert.equal(t.lines, ['line 98', 'line 99', 'line 100']);
  assert.is(t.partial, null);
  assert.is(t.offset, Buffer.byteLength(numbered(1, 100).join('\n') + '\n'));
  assert.ok(t.found);
});

tail('log-tail :: an unterminated last line is kept apart, and the offset stops before it', async ({ dir }) => {
  writeFileSync(logPath(dir), 'one\r\ntwo\nthr');
  const t = await readLastLines(dir, 50);
  assert.equal(t.lines, ['one', 'two']);
  assert.is(t.partial, 'thr');
  assert.is(t.offset, 'one\r\ntwo\n'.length);
});

tail('log-tail :: reaches into server.log.1 and .2 when server.log is short', async ({ dir }) => {
  writeFileSync(logPath(dir, 2), numbered(1, 5).join('\n') + '\n');
  writeFileSync(logPath(dir, 1), numbered(6, 8).join('\n') + '\n');
  writeFileSync(logPath(dir), numbered(9, 10).join('\n') + '\n');
  assert.equal((await readLastLines(dir, 7)).lines, numbered(4, 10));
  assert.equal((await readLastLines(dir, 50)).lines, numbered(1, 10));
  assert.equal((await readLastLines(dir, 0)).lines, []);
});

tail('log-tail :: no server.log yet: nothing, found false', async ({ dir }) => {
  const t = await readLastLines(dir, 10);
  assert.equal(t, { lines: [], partial: null, offset: 0, found: false });
});

tail('log-tail :: a log stretched to 256 MB is read from its last 8 MB, not into memory whole', async ({ dir }) => {
  // A server can seek or truncate its log far ahead: 256 MB of zeros, then its lines.
  writeFileSync(logPath(dir), 'first\n');
  truncateSync(logPath(dir), 256 * 1024 * 1024);
  appendFileSync(logPath(dir), '\nlast 1\nlast 2\n');
  const t = await readLastLines(dir, 1000);
  assert.equal(t.lines.slice(-2), ['last 1', 'last 2']);
  assert.not.ok(t.lines.includes('first'), 'what lies before the last 8 MB is not read');
  assert.ok(t.lines.join('').length <= 8_000_000, 'at most 8 MB read');
  assert.is(t.offset, 256 * 1024 * 1024 + '\nlast 1\nlast 2\n'.length);
});

tail.run();

// ---

const follow = logsSuite('followLines :: new lines until told to stop', 'wd-cli-follow-');

follow(
  'log-tail :: continues exactly at the offset, across a rotation, and finishes a partial line on stop',
  async ({ dir }) => {
    writeFileSync(logPath(dir), 'old 1\nold 2\nhalf');
    const t = await readLastLines(dir, 1);
    assert.equal(t.lines, ['old 2']);
    const got: string[] = [];
    let stop: () => void = () => {};
    const until = new Promise<void>((r) => (stop = r));
    const following = followLines(dir, t.offset, (l) => got.push(l), until);
    appendFileSync(logPath(dir), ' done\nnew 1\n');
    await waitFor('lines after the offset', () => got.length >= 2);
    assert.equal(got, ['half done', 'new 1']);
    rotateLogs(logPath(dir), 5);
    appendFileSync(logPath(dir, 1), 'late in the old file\n');
    writeFileSync(logPath(dir), 'after rotation\ntail without newline');
    await waitFor('the rotated file drained and the new one read', () => got.includes('after rotation'));
    stop();
    await following;
    assert.equal(got, ['half done', 'new 1', 'late in the old file', 'after rotation', 'tail without newline']);
  },
);

follow('log-tail :: a log that appears later is read from its start', async ({ dir }) => {
  const got: string[] = [];
  let stop: () => void = () => {};
  // followLines looks for the file before it returns: from here on the file is one that appeared later.
  const following = followLines(dir, 0, (l) => got.push(l), new Promise<void>((r) => (stop = r)));
  assert.not.ok(existsSync(logPath(dir)), 'no log yet when following began');
  writeFileSync(logPath(dir), 'first\nsecond\n');
  await waitFor('the new file read', () => got.length >= 2);
  stop();
  await following;
  assert.equal(got, ['first', 'second']);
});

follow('log-tail :: a log stretched to 256 MB is read a few MB a poll, never in one go', async ({ dir }) => {
  // A server can seek or truncate its log far ahead: 256 MB of zeros, read as lines of at most 64 kB each.
  writeFileSync(logPath(dir), 'first\n');
  truncateSync(logPath(dir), 256 * 1024 * 1024);
  const got: string[] = [];
  let reached = 0;
  const f = followLog(dir, (l) => got.push(l), {
    startOffset: 0,
    intervalMs: 60_000, // polled by hand below
    onPoll: (at) => (reached = at),
  });
  try {
    f.poll();
    assert.is(got[0], 'first');
    assert.is(reached, 4_000_000, 'one poll reads 4 MB');
    f.poll();
    assert.is(reached, 8_000_000, 'the next poll the next 4 MB');
  } finally {
    f.stop();
  }
});

follow.run();
