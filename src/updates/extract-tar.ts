import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, link, mkdir, symlink, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import { UpdateError } from '../errors.ts';
import { checkHardlinkTarget, checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';

/*
 * tar 7's Parser reads the archive (gzip sniffed, headers checked; `strict` makes its warnings failures) and this
 * module writes the entries, one at a time. Not tar's Unpack: after an abort it keeps writing in the background
 * (and holds the half-written file open), so a refused or cancelled extraction could not say when it was over.
 */

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const DIR_TYPES = new Set(['Directory', 'GNUDumpDir']);

async function writeEntry(entry: ReadEntry, destDir: string, links: Set<string>, signal: AbortSignal): Promise<void> {
  const name = entry.path;
  const segments = entrySegments(name);
  for (let i = 1; i < segments.length; i++) {
    if (links.has(segments.slice(0, i).join('/'))) refuseEntry(name, 'its path goes through a link in the archive');
  }
  const type = entry.type;
  if (!FILE_TYPES.has(type) && !DIR_TYPES.has(type) && type !== 'SymbolicLink' && type !== 'Link') {
    refuseEntry(name, `it is a ${type} entry (devices and special files are not allowed)`);
  }
  if (segments.length === 0) {
    if (!DIR_TYPES.has(type)) refuseEntry(name, 'it would replace the folder itself');
    entry.resume();
    return;
  }
  const dest = join(destDir, ...segments);
  if (DIR_TYPES.has(type)) {
    entry.resume();
    await mkdir(dest, { recursive: true });
    return;
  }
  await mkdir(dirname(dest), { recursive: true });
  // A later entry of the same name replaces the earlier one, as tar does (and a file must not write through a link).
  await unlink(dest).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  links.delete(segments.join('/'));
  if (type === 'SymbolicLink') {
    checkSymlinkTarget(name, entry.linkpath ?? '');
    entry.resume();
    await symlink(entry.linkpath as string, dest);
    links.add(segments.join('/'));
    return;
  }
  if (type === 'Link') {
    checkHardlinkTarget(name, entry.linkpath ?? '');
    entry.resume();
    await link(join(destDir, ...entrySegments(entry.linkpath as string)), dest);
    return;
  }
  await pipeline(entry, createWriteStream(dest), { signal });
  // Server builds rely on the execute bit of their programs; drop setuid/setgid/sticky; ignore the umask.
  if (entry.mode) await chmod(dest, entry.mode & 0o777);
}

function wrapTarError(err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new UpdateError(`the tar archive is corrupt or unreadable (${message})`, { cause: err });
}

/** Extracts a tar or tar.gz entry by entry, streaming; refuses unsafe entries (see entry-guard.ts). */
export function extractTar(archive: string, destDir: string, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const links = new Set<string>();
    const input = createReadStream(archive);
    const parser = new Parser({ strict: true });
    // Stops the entry being written: after an abort the parser never ends it, and its pipeline would wait forever.
    const halt = new AbortController();
    // Entries are written strictly in order; `work` never rejects and settles when the current one is done.
    let work: Promise<void> = Promise.resolve();
    let failure: unknown;
    let finished = false;

    const finish = () => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onAbort);
      void work.then(() => (failure === undefined ? resolve() : reject(wrapTarError(failure))));
    };
    const fail = (err: unknown) => {
      failure ??= err;
      halt.abort(err);
      input.destroy();
      parser.abort(err instanceof Error ? err : new Error(String(err)));
      finish();
    };
    const onAbort = () => fail(new UpdateError('extraction was cancelled', { cause: signal?.reason }));

    parser.on('entry', (entry: ReadEntry) => {
      work = work.then(async () => {
        if (failure !== undefined) return void entry.resume();
        try {
          await writeEntry(entry, destDir, links, halt.signal);
        } catch (err) {
          fail(err);
        }
      });
    });
    parser.on('error', (err: unknown) => fail(err));
    parser.on('end', finish);
    input.on('error', (err) => fail(err));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    input.pipe(parser);
  });
}
