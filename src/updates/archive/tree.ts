import { mkdir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { refuseEntry } from './entry-guard.ts';

/**
 * The folder an archive is extracted into, and what the extraction has put there so far. Both extractors place
 * their entries through it, one at a time. A later entry of the same name replaces the earlier one (as tar does)
 * and never writes through a link an earlier entry made. In a folder that started empty, only names this
 * extraction placed can exist, so a parent folder is made once and only a name already placed is unlinked:
 * builds are thousands of small files, and those file-system round trips took most of the extraction time.
 */
export interface ExtractTree {
  /** The folder extracted into. */
  root: string;
  /** The entry's absolute path once its parent folders exist and nothing an earlier entry placed is in its way. */
  place(name: string, segments: string[]): Promise<string>;
  /** A directory entry: makes it (and its parents). */
  folder(name: string, segments: string[]): Promise<string>;
  /** Records that the entry placed at `segments` is a symbolic link: later entries may not go through it. */
  linked(segments: string[]): void;
}

export async function createExtractTree(destDir: string): Promise<ExtractTree> {
  const fresh = (await readdir(destDir)).length === 0;
  const made = new Set<string>(['']);
  const placed = new Set<string>();
  const links = new Set<string>();

  const refuseThroughLink = (name: string, segments: string[]) => {
    for (let i = 1; i < segments.length; i++) {
      if (links.has(segments.slice(0, i).join('/'))) refuseEntry(name, 'its path goes through a link in the archive');
    }
  };
  const makeFolder = async (segments: string[]) => {
    if (made.has(segments.join('/'))) return;
    await mkdir(join(destDir, ...segments), { recursive: true });
    for (let i = 1; i <= segments.length; i++) made.add(segments.slice(0, i).join('/'));
  };

  return {
    root: destDir,
    async place(name, segments) {
      refuseThroughLink(name, segments);
      await makeFolder(segments.slice(0, -1));
      const rel = segments.join('/');
      const dest = join(destDir, ...segments);
      if (!fresh || placed.has(rel)) {
        await unlink(dest).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
      }
      links.delete(rel);
      placed.add(rel);
      return dest;
    },
    async folder(name, segments) {
      refuseThroughLink(name, segments);
      await makeFolder(segments);
      return join(destDir, ...segments);
    },
    linked(segments) {
      links.add(segments.join('/'));
    },
  };
}
