import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { escapeRegExp } from '../archive/names.ts';

/*
 * The glob of `Updates.Artifact` and `ClientArtifact` (Node 20 has no `fs.glob`): segments relative to `source/`,
 * `*` and `?` within a segment, case-insensitive; no absolute paths, no `..`.
 */

export function segmentMatcher(segment: string): RegExp {
  const body = escapeRegExp(segment).replaceAll('\\*', '[^/]*').replaceAll('\\?', '[^/]');
  return new RegExp(`^${body}$`, 'i');
}

export function splitPattern(pattern: string, setting: string): string[] {
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  if (pattern.startsWith('/') || segments.length === 0 || segments.some((s) => s === '..' || s.includes('\\'))) {
    throw new UpdateError(
      `${setting} "${pattern}" must be a relative path inside the repository, such as release/*linux-x64*.zip`,
    );
  }
  return segments;
}

export async function globFiles(root: string, pattern: string, setting = 'the artifact pattern'): Promise<string[]> {
  const segments = splitPattern(pattern, setting);
  let dirs = [root];
  const matches: string[] = [];
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    const matcher = segmentMatcher(segment);
    const next: string[] = [];
    for (const dir of dirs) {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (!matcher.test(entry.name)) continue;
        // Symbolic links are not followed: an artifact is a file the build wrote inside the checkout.
        if (last && entry.isFile()) matches.push(join(dir, entry.name));
        if (!last && entry.isDirectory()) next.push(join(dir, entry.name));
      }
    }
    dirs = next;
  }
  return matches.sort();
}
