/**
 * A counterexample of the archive fuzz suite (archive-guard.test.ts), kept as a plain test: a tar hard link to a
 * symbolic link of the same archive. link(2) does not follow the link, so the new name was the same symbolic link
 * read from another folder: `a/l/x` → `..` points inside the staging folder, `l` hard-linked to it is `l` → `..`,
 * which points outside.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { extractArchive } from '../../src/updates/archive/extract.ts';
import { tempSuite } from '../_support/env.ts';
import { writeRawTar } from '../fixtures/archives/build.ts';
import { rejects } from '../updates/_support/instance-suite.ts';

const hardlinks = tempSuite('fuzz/archive hard links', { prefix: 'wd-fuzz-hardlink-' });

hardlinks('archive :: a hard link to a symbolic link is refused, and nothing is placed for it', async ({ dir }) => {
  const dest = join(dir, 'parent', 'dest');
  await mkdir(dest, { recursive: true });
  const tar = join(dir, 'x.tar');
  await writeRawTar(tar, [
    { type: 'SymbolicLink', path: 'a/l/x', linkpath: '..' },
    { type: 'Link', path: 'l', linkpath: 'a/l/x' },
  ]);
  await rejects(
    () => extractArchive(tar, dest),
    /refused archive entry "l": it is a hard link to the symbolic link "a\/l\/x", which would point elsewhere from here/,
  );
  assert.equal(await readdir(dest), ['a']);
});

hardlinks(
  'archive :: a hard link to a file (through a folder link that stays inside) is still made',
  async ({ dir }) => {
    const dest = join(dir, 'dest');
    await mkdir(dest, { recursive: true });
    const tar = join(dir, 'y.tar');
    await writeRawTar(tar, [
      { type: 'File', path: 'Resources/data.txt', content: 'data' },
      { type: 'SymbolicLink', path: 'Resources/up', linkpath: '..' },
      { type: 'Link', path: 'copy.txt', linkpath: 'Resources/up/Resources/data.txt' },
    ]);
    await extractArchive(tar, dest);
    assert.equal((await readdir(dest)).sort(), ['Resources', 'copy.txt']);
  },
);

hardlinks.run();
