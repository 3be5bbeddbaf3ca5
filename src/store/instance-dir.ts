import { mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { describeError } from '../errors.ts';

/** Sub-folders of every instance folder: the usual `binaries/`, `bin/` and `data/`, plus our `logs/` and `dumps/`. */
export const INSTANCE_SUBDIRS = ['binaries', 'bin', 'data', 'logs', 'dumps'] as const;

/** A path that would leave the instance folder; callers answer 400/404 or refuse the archive entry. */
export class PathEscapeError extends Error {
  override name = 'PathEscapeError';
}

/** Creates the instance folder and its sub-folders; safe to call on every start. */
export async function prepareInstanceDir(dir: string): Promise<void> {
  try {
    for (const sub of INSTANCE_SUBDIRS) await mkdir(join(dir, sub), { recursive: true });
  } catch (err) {
    throw new Error(
      `could not create the instance folder ${dir} (${describeError(err)}); check that its parent is writable`,
      { cause: err },
    );
  }
}

function isWithin(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** Returns `candidate` made absolute, or throws PathEscapeError when it lies outside `dir` (lexically). */
export function assertInside(dir: string, candidate: string): string {
  const root = resolve(dir);
  const abs = resolve(root, candidate);
  if (candidate.includes('\0') || !isWithin(root, abs)) {
    throw new PathEscapeError(`refusing ${JSON.stringify(candidate)}: it leads outside the instance folder ${root}`);
  }
  return abs;
}

/** Joins a client- or archive-supplied relative path to `dir`, refusing absolute paths and `..` escapes. */
export function resolveInside(dir: string, relativePath: string): string {
  if (isAbsolute(relativePath)) {
    throw new PathEscapeError(
      `refusing ${JSON.stringify(relativePath)}: expected a path relative to the instance folder`,
    );
  }
  return assertInside(dir, relativePath);
}

/**
 * Like resolveInside, and also follows symbolic links in the part of the path that exists, so a link inside
 * the folder that points outside it is refused too. Use before reading or serving a file.
 */
export async function resolveInsideReal(dir: string, relativePath: string): Promise<string> {
  const abs = resolveInside(dir, relativePath);
  const root = await realpath(resolve(dir));
  // Walk up to the deepest part that exists; what does not exist yet cannot be a link.
  let existing = abs;
  let rest = '';
  for (let i = 0; i < 256; i += 1) {
    try {
      const real = await realpath(existing);
      const full = rest ? join(real, rest) : real;
      if (!isWithin(root, full)) {
        throw new PathEscapeError(
          `refusing ${JSON.stringify(relativePath)}: a link leads outside the instance folder ${root}`,
        );
      }
      return full;
    } catch (err) {
      const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = dirname(existing);
      if (parent === existing) break;
      rest = rest ? join(relative(parent, existing), rest) : relative(parent, existing);
      existing = parent;
    }
  }
  return abs;
}
