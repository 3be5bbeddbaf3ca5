import { createReadStream } from 'node:fs';
import { Unpack, type ReadEntry } from 'tar';
import type { Stats } from 'node:fs';
import { UpdateError } from '../errors.ts';
import { checkHardlinkTarget, checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';

const ALLOWED_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'GNUDumpDir', 'SymbolicLink', 'Link']);

/** Refuses what the entry guard forbids; tar 7 would merely strip or skip some of these with a warning. */
function checkEntry(path: string, entry: ReadEntry | Stats): void {
  if (!('type' in entry) || typeof entry.type !== 'string') return;
  entrySegments(path);
  if (!ALLOWED_TYPES.has(entry.type)) refuseEntry(path, `it is a ${entry.type} entry (devices and special files are not allowed)`);
  if (entry.type === 'SymbolicLink') checkSymlinkTarget(path, entry.linkpath ?? '');
  if (entry.type === 'Link') checkHardlinkTarget(path, entry.linkpath ?? '');
}

function wrapTarError(err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new UpdateError(`the tar archive is corrupt, unsafe or unreadable (${message})`, { cause: err });
}

/**
 * Extracts a tar or tar.gz (tar sniffs the compression) through tar 7's Unpack, streaming. `strict` turns tar's
 * warnings (bad headers, truncation, writing through a link) into failures; owners are never taken from the archive.
 */
export function extractTar(archive: string, destDir: string, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const input = createReadStream(archive);
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined) resolve();
      else {
        input.destroy();
        reject(wrapTarError(err));
      }
    };
    const unpack = new Unpack({
      cwd: destDir,
      strict: true,
      preserveOwner: false,
      filter: (path, entry) => {
        try {
          checkEntry(path, entry);
          return true;
        } catch (err) {
          finish(err);
          unpack.abort(err instanceof Error ? err : new Error(String(err)));
          return false;
        }
      },
    });
    unpack.on('error', (err: unknown) => finish(err));
    unpack.on('close', () => finish());
    const onAbort = () => {
      finish(new UpdateError('extraction was cancelled', { cause: signal?.reason }));
      unpack.abort(new Error('cancelled'));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    input.on('error', (err) => finish(err));
    input.pipe(unpack);
  });
}
