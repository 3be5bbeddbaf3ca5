import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { INSTANCE_SUBDIRS, prepareInstanceDir } from '../../src/supervisor/instance-start.ts';
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

s.run();
