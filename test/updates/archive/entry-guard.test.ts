import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkHardlinkTarget, checkSymlinkTarget, entrySegments } from '../../../src/updates/archive/entry-guard.ts';
import { rejects } from '../_support/instance-suite.ts';

const paths = suite('entry paths');

paths('entry paths :: relative names are split; "." and empty segments vanish', () => {
  assert.equal(entrySegments('./a//b/./c.txt'), ['a', 'b', 'c.txt']);
  assert.equal(entrySegments('dir/'), ['dir']);
  assert.equal(entrySegments('./'), [], 'the folder itself');
  assert.equal(entrySegments('a/b'), ['a', 'b']);
});

paths('entry paths :: absolute, drive-letter, ".." and NUL names are refused, naming the entry', async () => {
  await rejects(() => entrySegments('/etc/passwd'), /"\/etc\/passwd": it has an absolute path/);
  await rejects(() => entrySegments('C:/Windows/x'), /absolute path/);
  await rejects(() => entrySegments('\\\\server\\share'), /absolute path/);
  await rejects(() => entrySegments('a/../../b'), /"a\/\.\.\/\.\.\/b": its path climbs out/);
  await rejects(() => entrySegments('a/..'), /climbs out/);
  await rejects(() => entrySegments('a\0b'), /NUL/);
});

paths.run();

// ---

const links = suite('entry links');

links('entry links :: symlinks may climb no higher than their own depth', async () => {
  checkSymlinkTarget('a/b/l', '../x');
  checkSymlinkTarget('a/b/l', '../../x');
  checkSymlinkTarget('l', 'Resources/data.txt');
  checkSymlinkTarget('l', '.');
  await rejects(
    () => checkSymlinkTarget('a/b/l', '../../../x'),
    /"a\/b\/l": it is a link to "\.\.\/\.\.\/\.\.\/x", outside/,
  );
  await rejects(() => checkSymlinkTarget('l', '..'), /outside/);
});

links('entry links :: targets that go down then up, absolute or empty targets are refused', async () => {
  await rejects(() => checkSymlinkTarget('l', 'sub/../x'), /climbs back up after going down/);
  await rejects(() => checkSymlinkTarget('a/l', '../b/../../x'), /climbs back up/);
  await rejects(() => checkSymlinkTarget('l', '/etc'), /absolute path "\/etc"/);
  await rejects(() => checkSymlinkTarget('l', ''), /empty or invalid target/);
});

links('entry links :: hard links name a path from the archive root without ".."', async () => {
  checkHardlinkTarget('h', 'Resources/data.txt');
  await rejects(() => checkHardlinkTarget('h', '../x'), /"h": it is a hard link to "\.\.\/x"/);
  await rejects(() => checkHardlinkTarget('h', '/etc/passwd'), /hard link/);
  await rejects(() => checkHardlinkTarget('h', ''), /hard link/);
});

links.run();
