import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import {
  assertInside,
  INSTANCE_SUBDIRS,
  PathEscapeError,
  prepareInstanceDir,
  resolveInside,
  resolveInsideReal,
} from '../../src/store/instance-dir.ts';
import { tempSuite } from '../_support/env.ts';

const s = tempSuite('store/instance-dir', { prefix: 'wd-idir-' });

s('dir :: prepare creates every sub-folder, keeps what is there, and is idempotent', async ({ dir }) => {
  const inst = join(dir, 'instances', 'alpha');
  await prepareInstanceDir(inst);
  await writeFile(join(inst, 'bin', 'keep.txt'), 'x');
  await prepareInstanceDir(inst);
  assert.equal((await readdir(inst)).sort(), [...INSTANCE_SUBDIRS].sort());
  assert.equal(await readdir(join(inst, 'bin')), ['keep.txt']);
});

s('dir :: prepare fails with the folder in the message when a file is in the way', async ({ dir }) => {
  await writeFile(join(dir, 'alpha'), 'not a folder');
  const err = await prepareInstanceDir(join(dir, 'alpha')).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, Error);
  assert.match((err as Error).message, /alpha/);
});

s('dir :: resolveInside accepts paths inside and refuses escapes', ({ dir }) => {
  assert.is(resolveInside(dir, 'bin/x'), join(dir, 'bin', 'x'));
  assert.is(resolveInside(dir, 'bin/../data/y'), join(dir, 'data', 'y'));
  assert.is(resolveInside(dir, '..data'), join(dir, '..data'), 'a name starting with dots is not an escape');
  for (const bad of ['..', '../x', 'bin/../../x', '/etc/passwd', 'a\0b']) {
    assert.throws(
      () => resolveInside(dir, bad),
      (e: unknown) => e instanceof PathEscapeError,
      bad,
    );
  }
  assert.throws(
    () => assertInside(join(dir, 'alpha'), join(dir, 'alphabet', 'x')),
    (e: unknown) => e instanceof PathEscapeError,
    'sibling with a common prefix',
  );
  assert.is(assertInside(dir, join(dir, 'logs')), join(dir, 'logs'));
});

s('dir :: resolveInsideReal refuses a link inside the folder that points outside it', async ({ dir }) => {
  const inst = join(dir, 'inst');
  const outside = join(dir, 'outside');
  await mkdir(inst);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'x');
  await symlink(outside, join(inst, 'escape'));
  await mkdir(join(inst, 'binaries'));
  await symlink(join(inst, 'binaries'), join(inst, 'alias'));
  await assert.not.throws(() => resolveInside(inst, 'escape/secret.txt'), 'lexically inside');
  const err = await resolveInsideReal(inst, 'escape/secret.txt').then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, PathEscapeError);
  assert.ok(
    (await resolveInsideReal(inst, 'alias/new.zip')).endsWith(join('binaries', 'new.zip')),
    'a link that stays inside is fine',
  );
  assert.ok((await resolveInsideReal(inst, 'not/yet/there.txt')).endsWith(join('not', 'yet', 'there.txt')));
});

s.run();
