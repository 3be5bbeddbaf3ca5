import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { APPEND, NotRegularFileError, openRegular, openRegularSync, readRegularFile } from '../src/regular-file.ts';
import { tempSuite } from './_support/env.ts';

const MKFIFO = spawnSync('mkfifo', ['--version']).error === undefined;
const test = tempSuite('regular file', { prefix: 'wd-regular-' });

/** Rejects (or throws) with a NotRegularFileError whose message names `path`; a wait on a pipe fails the test. */
async function refused(work: () => unknown, path: string, kind: RegExp): Promise<void> {
  try {
    await work();
  } catch (err) {
    assert.instance(err, NotRegularFileError);
    assert.ok((err as Error).message.startsWith(`${path} is not a regular file`), (err as Error).message);
    assert.match((err as Error).message, kind);
    return;
  }
  assert.unreachable(`${path} was opened`);
}

test('regular file :: a named pipe is refused at once, for reading and for appending, async and sync', async ({
  dir,
}) => {
  if (!MKFIFO) return console.log('  (skipped: no mkfifo)');
  const pipe = join(dir, 'server.log');
  spawnSync('mkfifo', [pipe]);
  await refused(() => readRegularFile(pipe), pipe, /a named pipe/);
  await refused(() => openRegular(pipe, APPEND), pipe, /named pipe/);
  await refused(() => openRegularSync(pipe), pipe, /a named pipe/);
  // Nobody reads the pipe: the non-blocking write-only open fails with ENXIO, reported the same way.
  await refused(() => openRegularSync(pipe, APPEND), pipe, /named pipe/);
});

test('regular file :: a device and a folder are refused (EISDIR for the folder), unless folders are asked for', async ({
  dir,
}) => {
  await refused(() => readRegularFile('/dev/zero'), '/dev/zero', /a device/);
  const folder = join(dir, 'data');
  mkdirSync(folder);
  try {
    await openRegular(folder);
    assert.unreachable('a folder was opened as a file');
  } catch (err) {
    assert.is((err as NotRegularFileError).code, 'EISDIR');
  }
  const { file, stats } = await openRegular(folder, constants.O_RDONLY, { folders: true });
  assert.ok(stats.isDirectory());
  await file.close();
});

test('regular file :: a regular file reads and appends as usual; a missing one keeps its ENOENT', async ({ dir }) => {
  const path = join(dir, 'a.yml');
  writeFileSync(path, 'one\n');
  assert.is(await readRegularFile(path, 'utf8'), 'one\n');
  const { fd, stats } = openRegularSync(path, APPEND);
  assert.is(stats.size, 4);
  closeSync(fd);
  const err = await readRegularFile(join(dir, 'missing')).catch((e: unknown) => e);
  assert.is((err as NodeJS.ErrnoException).code, 'ENOENT');
});

test.run();
