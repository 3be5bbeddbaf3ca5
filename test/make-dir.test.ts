import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { makeDir, makeDirSync } from '../src/make-dir.ts';
import { tempSuite } from './_support/env.ts';

const test = tempSuite('make dir', { prefix: 'wd-make-dir-' });

/** The error `work` fails with; a success fails the test. */
async function failure(work: () => unknown): Promise<NodeJS.ErrnoException> {
  try {
    await work();
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  return assert.unreachable('it succeeded') as never;
}

test('make dir :: makes every missing folder with the mode, and a folder already there is fine', async ({ dir }) => {
  const deep = join(dir, 'a', 'b', 'c');
  await makeDir(deep, 0o700);
  assert.is(statSync(join(dir, 'a')).mode & 0o777, 0o700, 'the parents get the mode too');
  assert.ok(statSync(deep).isDirectory());
  await makeDir(deep);
  makeDirSync(join(dir, 'x', 'y'));
  makeDirSync(join(dir, 'x', 'y'));
  assert.ok(statSync(join(dir, 'x', 'y')).isDirectory());
});

test('make dir :: a file in the way fails, as mkdir -p does', async ({ dir }) => {
  const file = join(dir, 'file');
  writeFileSync(file, 'not a folder');
  assert.is((await failure(() => makeDir(file))).code, 'EEXIST');
  assert.is((await failure(() => makeDir(join(file, 'sub')))).code, 'ENOTDIR');
  assert.is((await failure(() => makeDirSync(join(file, 'sub', 'deeper')))).code, 'ENOTDIR');
});

// Where Node's `recursive: true` never returns (src/make-dir.ts): a regression hangs the file until the runner's
// deadline ends it, which fails it.
test('make dir :: under /proc it fails with ENOENT instead of spinning, async and sync', async () => {
  const path = `/proc/watchdog-no-such-${process.pid}/a/b`;
  assert.is((await failure(() => makeDir(path))).code, 'ENOENT');
  assert.is((await failure(() => makeDirSync(path))).code, 'ENOENT');
});

test.run();
