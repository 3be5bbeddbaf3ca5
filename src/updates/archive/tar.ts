import { link, lstat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { UpdateError } from '../../errors.ts';
import { openRegular } from '../../regular-file.ts';
import { checkHardlinkTarget, checkSymlinkTarget, entrySegments, refuseEntry } from './entry-guard.ts';
import { createExtractTree, type ExtractTree } from './tree.ts';

/*
 * tar's Parser reads (`strict`: warnings fail) and this module writes each entry in turn. Not tar's Unpack: after an
 * abort it keeps writing in the background, so a refused or cancelled extraction could not say when it was over.
 */

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const DIR_TYPES = new Set(['Directory', 'GNUDumpDir']);

/** `signal` ends a file's write: after an abort the parser never ends its entry. */
async function writeEntry(entry: ReadEntry, tree: ExtractTree, signal: AbortSignal): Promise<void> {
  const name = entry.path;
  const segments = entrySegments(name);
  const type = entry.type;
  if (!FILE_TYPES.has(type) && !DIR_TYPES.has(type) && type !== 'SymbolicLink' && type !== 'Link') {
    refuseEntry(name, `it is a ${type} entry (devices and special files are not allowed)`);
  }
  if (segments.length === 0 && !DIR_TYPES.has(type)) refuseEntry(name, 'it would replace the folder itself');
  if (FILE_TYPES.has(type)) return tree.file(name, segments, entry, entry.mode ?? null, signal);
  entry.resume();
  if (DIR_TYPES.has(type)) {
    if (segments.length > 0) await tree.folder(name, segments);
    return;
  }
  const target = entry.linkpath ?? '';
  if (type === 'SymbolicLink') checkSymlinkTarget(name, target);
  else checkHardlinkTarget(name, target);
  const linked = type === 'Link' ? join(tree.root, ...entrySegments(target)) : '';
  // link(2) does not follow a symbolic link: the new name is that same link read from another folder, where its
  // relative target can climb out (`a/l/x` → `..` is inside, `l` hard-linked to it is `l` → `..`, outside).
  if (type === 'Link' && (await lstat(linked).catch(() => null))?.isSymbolicLink()) {
    refuseEntry(name, `it is a hard link to the symbolic link "${target}", which would point elsewhere from here`);
  }
  const dest = await tree.place(name, segments);
  if (type === 'Link') {
    await link(linked, dest);
    return;
  }
  await symlink(target, dest);
  tree.linked(segments);
}

function wrapTarError(err: unknown): UpdateError {
  if (err instanceof UpdateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new UpdateError(`the tar archive is corrupt or unreadable (${message})`, { cause: err });
}

/** In .update/, which the server can write: never a wait on a pipe put there. */
const readArchive = async (archive: string): Promise<Readable> =>
  (await openRegular(archive)).file.createReadStream({ highWaterMark: 1 << 18 });

const parse = (file: Readable, parser: Parser, gzip: boolean, signal?: AbortSignal): Promise<void> =>
  gzip ? pipeline(file, createGunzip({ chunkSize: 1 << 18 }), parser, { signal }) : pipeline(file, parser, { signal });

/**
 * Extracts a tar or tar.gz, from a file or a stream, refusing unsafe entries (entry-guard.ts) and stopping at
 * `capBytes` (tree.ts). zlib inflates on the thread pool beside this thread's parsing, as `tar xzf` pipes through
 * gzip; tar's own inflate would run synchronously here.
 */
export async function extractTar(
  archive: string | Readable,
  destDir: string,
  signal?: AbortSignal,
  gzip = false,
  capBytes?: number,
): Promise<void> {
  // A stream given (a download as it arrives) must end or fail with an error: a plain destroy never ends the parser.
  const file = typeof archive === 'string' ? await readArchive(archive) : archive;
  const tree = await createExtractTree(destDir, capBytes);
  const parser = new Parser({ strict: true });
  const halt = new AbortController();
  let failure: unknown;
  // Entries are written strictly in order; `work` never rejects and settles when the last one taken is written.
  let work: Promise<void> = Promise.resolve();
  const fail = (err: unknown) => {
    failure ??= err;
    halt.abort(err);
  };
  parser.on('entry', (entry: ReadEntry) => {
    work = work.then(async () => {
      if (failure !== undefined) return void entry.resume();
      try {
        await writeEntry(entry, tree, halt.signal);
      } catch (err) {
        fail(err);
        // Its 'error' ends the pipeline below, and with it the input.
        parser.abort(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
  const stop = AbortSignal.any(signal ? [signal, halt.signal] : [halt.signal]);
  try {
    await parse(file, parser, gzip, stop);
  } catch (err) {
    fail(signal?.aborted ? new UpdateError('extraction was cancelled', { cause: signal.reason }) : err);
  }
  await work;
  if (failure !== undefined) throw wrapTarError(failure);
}

/** The sum of a (gzipped) tar's header sizes, in a pass that writes nothing. */
export async function tarDeclared(archive: string, gzip: boolean, signal?: AbortSignal): Promise<number> {
  let total = 0;
  const parser = new Parser({ strict: true });
  parser.on('entry', (entry: ReadEntry) => {
    total += entry.size ?? 0;
    entry.resume();
  });
  const file = await readArchive(archive);
  try {
    await parse(file, parser, gzip, signal);
  } catch (err) {
    throw signal?.aborted ? new UpdateError('extraction was cancelled', { cause: signal.reason }) : wrapTarError(err);
  }
  return total;
}
