import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import {
  checkHardlinkTarget,
  checkSymlinkTarget,
  entryDestination,
  entrySegments,
} from '../../../src/updates/archive/entry-guard.ts';

function refuses(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, UpdateError);
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected a refusal matching ${pattern}`);
}

const paths = suite('entry paths');

paths('entry paths :: relative names are split; "." and empty segments vanish', () => {
  assert.equal(entrySegments('./a//b/./c.txt'), ['a', 'b', 'c.txt']);
  assert.equal(entrySegments('dir/'), ['dir']);
  assert.is(entryDestination('/x/dest', './'), null);
  assert.is(entryDestination('/x/dest', 'a/b'), '/x/dest/a/b');
});

paths('entry paths :: absolute, drive-letter, ".." and NUL names are refused, naming the entry', () => {
  refuses(() => entrySegments('/etc/passwd'), /"\/etc\/passwd": it has an absolute path/);
  refuses(() => entrySegments('C:/Windows/x'), /absolute path/);
  refuses(() => entrySegments('\\\\server\\share'), /absolute path/);
  refuses(() => entrySegments('a/../../b'), /"a\/\.\.\/\.\.\/b": its path climbs out/);
  refuses(() => entrySegments('a/..'), /climbs out/);
  refuses(() => entrySegments('a\0b'), /NUL/);
});

paths.run();

// ---

const links = suite('entry links');

links('entry links :: symlinks may climb no higher than their own depth', () => {
  checkSymlinkTarget('a/b/l', '../x');
  checkSymlinkTarget('a/b/l', '../../x');
  checkSymlinkTarget('l', 'Resources/data.txt');
  checkSymlinkTarget('l', '.');
  refuses(() => checkSymlinkTarget('a/b/l', '../../../x'), /"a\/b\/l": it is a link to "\.\.\/\.\.\/\.\.\/x", outside/);
  refuses(() => checkSymlinkTarget('l', '..'), /outside/);
});

links('entry links :: targets that go down then up, absolute or empty targets are refused', () => {
  refuses(() => checkSymlinkTarget('l', 'sub/../x'), /climbs back up after going down/);
  refuses(() => checkSymlinkTarget('a/l', '../b/../../x'), /climbs back up/);
  refuses(() => checkSymlinkTarget('l', '/etc'), /absolute path "\/etc"/);
  refuses(() => checkSymlinkTarget('l', ''), /empty or invalid target/);
});

links('entry links :: hard links name a path from the archive root without ".."', () => {
  checkHardlinkTarget('h', 'Resources/data.txt');
  refuses(() => checkHardlinkTarget('h', '../x'), /"h": it is a hard link to "\.\.\/x"/);
  refuses(() => checkHardlinkTarget('h', '/etc/passwd'), /hard link/);
  refuses(() => checkHardlinkTarget('h', ''), /hard link/);
});

links.run();
