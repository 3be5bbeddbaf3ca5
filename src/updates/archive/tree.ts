import { createWriteStream } from 'node:fs';
import { chmod, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makeDir } from '../../make-dir.ts';
import { formatBytes } from '../../store/disk-space.ts';
import { DiskSpaceError } from '../install/disk-guard.ts';
import { refuseEntry } from './entry-guard.ts';

/** Setting it is the only way to read it; nothing in the daemon changes it. */
const UMASK = process.umask();

/**
 * The folder an archive is extracted into and what both extractors placed there so far. A later entry of a name
 * replaces the earlier (as tar does), never writing through a link an earlier entry made; in a folder that started
 * empty only placed names can exist, so only those are unlinked. `capBytes` bounds what is written, counted as
 * written (a zip can lie about its sizes).
 */
export async function createExtractTree(destDir: string, capBytes = Number.POSITIVE_INFINITY) {
  const fresh = (await readdir(destDir)).length === 0;
  const made = new Set<string>(['']);
  const placed = new Set<string>();
  const links = new Set<string>();
  let written = 0;

  const refuseThroughLink = (name: string, segments: string[]) => {
    for (let i = 1; i < segments.length; i++) {
      if (links.has(segments.slice(0, i).join('/'))) refuseEntry(name, 'its path goes through a link in the archive');
    }
  };
  const makeFolder = async (segments: string[]) => {
    if (made.has(segments.join('/'))) return;
    await makeDir(join(destDir, ...segments));
    for (let i = 1; i <= segments.length; i++) made.add(segments.slice(0, i).join('/'));
  };
  async function* charged(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      written += chunk.length;
      if (written > capBytes) {
        throw new DiskSpaceError(
          'cap',
          `the archive unpacks to more than its cap of ${formatBytes(capBytes)} (its declared size plus 10 %, at ` +
            'most Updates.MaxUnpackedMegabytes); extraction was stopped and nothing was installed',
        );
      }
      yield chunk;
    }
  }
  /** The entry's path, its parents made and nothing an earlier entry placed in its way. */
  const place = async (name: string, segments: string[]): Promise<string> => {
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
  };

  return {
    root: destDir,
    place,
    /** Writes a file with `mode`'s permission bits (setuid, setgid and sticky dropped; the umask ignored). */
    async file(
      name: string,
      segments: string[],
      data: AsyncIterable<Buffer>,
      mode: number | null,
      signal?: AbortSignal,
    ) {
      const dest = await place(name, segments);
      const perms = mode ? mode & 0o777 : null;
      const source = Readable.from(data, { objectMode: false });
      await pipeline(source, charged, createWriteStream(dest, { mode: perms ?? 0o666 }), signal ? { signal } : {});
      // A new file gets `mode` less the umask: a build's 0644 and 0755 pass a 022 umask untouched.
      if (perms !== null && (perms & UMASK) !== 0) await chmod(dest, perms);
    },
    async folder(name: string, segments: string[]): Promise<void> {
      refuseThroughLink(name, segments);
      await makeFolder(segments);
    },
    /** The entry at `segments` is a symbolic link: later entries may not go through it. */
    linked(segments: string[]): void {
      links.add(segments.join('/'));
    },
  };
}

export type ExtractTree = Awaited<ReturnType<typeof createExtractTree>>;
