import { UpdateError } from '../../errors.ts';

/*
 * What an entry may name, so nothing lands outside the folder. Paths: relative, no `..`. Symbolic links: leading `..`
 * segments (no more than the link's depth), then only downward names, so every link resolves inside, through other
 * links too, in any order. Hard links: a path from the archive root without `..`.
 */

export function refuseEntry(name: string, why: string): never {
  throw new UpdateError(
    `refused archive entry "${name}": ${why}; the archive is unsafe or damaged, so nothing was installed`,
  );
}

function isAbsoluteName(name: string): boolean {
  return name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name);
}

/** The entry's path segments without `.` and empty ones; refuses absolute paths and `..`. */
export function entrySegments(name: string): string[] {
  if (name.includes('\0')) refuseEntry(name, 'the name contains a NUL byte');
  if (isAbsoluteName(name)) refuseEntry(name, 'it has an absolute path');
  const segments = name.split(/[/\\]/).filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) refuseEntry(name, 'its path climbs out of the folder with ".."');
  return segments;
}

export function checkSymlinkTarget(name: string, target: string): void {
  if (target === '' || target.includes('\0')) refuseEntry(name, 'it is a link with an empty or invalid target');
  if (isAbsoluteName(target)) refuseEntry(name, `it is a link to the absolute path "${target}"`);
  const depth = entrySegments(name).length - 1;
  let ups = 0;
  let descended = false;
  for (const segment of target.split(/[/\\]/)) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') {
      descended = true;
    } else if (descended) {
      refuseEntry(name, `it is a link whose target "${target}" climbs back up after going down`);
    } else if (++ups > depth) {
      refuseEntry(name, `it is a link to "${target}", outside the folder`);
    }
  }
}

export function checkHardlinkTarget(name: string, target: string): void {
  if (target === '' || isAbsoluteName(target) || target.split(/[/\\]/).includes('..')) {
    refuseEntry(name, `it is a hard link to "${target}", outside the folder`);
  }
}
