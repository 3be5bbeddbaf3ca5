import { close, closeSync, fchmod, fchmodSync, open, openSync, write, writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import type { ByteBudget } from './budget.ts';

/** An entry's data as an extractor hands it over: its chunks in order, and how to make a pending read give up. */
export interface EntryContents {
  chunks: AsyncIterable<Buffer>;
  /** Ends the source, so that a read waiting for data that will never come rejects (an aborted parser never ends its entry). */
  stop(): void;
}

/*
 * The callback API, not fs/promises: a FileHandle is an object with its own close tracking and finaliser, and its
 * open was a quarter of the extraction's main-thread time on a 200 MB build of 1,600 files (profiled); the same
 * 1,600 small files cost the main thread about half as much through the callbacks.
 *
 * Off the main thread (the update worker, fetch/off-thread.ts) the calls are made synchronously: blocking there
 * holds up nothing else, and each asynchronous call is a hand-over to a thread-pool thread and back, which on two
 * cores cost more than the system call itself (a 200 MB tar.gz staged 0.1 to 0.15 s sooner, in alternating runs).
 */
const BLOCKING = !isMainThread;
const openFile = (path: string, mode: number) =>
  BLOCKING
    ? Promise.resolve(openSync(path, 'w', mode))
    : new Promise<number>((resolve, reject) => open(path, 'w', mode, (err, fd) => (err ? reject(err) : resolve(fd))));
const writeSome = (fd: number, chunk: Buffer, at: number) =>
  BLOCKING
    ? Promise.resolve(writeSync(fd, chunk, at, chunk.length - at, null))
    : new Promise<number>((resolve, reject) =>
        write(fd, chunk, at, chunk.length - at, null, (err, n) => (err ? reject(err) : resolve(n))),
      );
const setMode = (fd: number, mode: number) =>
  BLOCKING
    ? Promise.resolve(fchmodSync(fd, mode))
    : new Promise<void>((resolve, reject) => fchmod(fd, mode, (err) => (err ? reject(err) : resolve())));
const closeFile = (fd: number) =>
  BLOCKING
    ? Promise.resolve(closeSync(fd))
    : new Promise<void>((resolve, reject) => close(fd, (err) => (err ? reject(err) : resolve())));

/**
 * Takes a (small) entry's whole data off its source at once, before its file is even opened, so the source can
 * move on to the next entry while this one is written (a tar parser waits until an entry's data is taken).
 * `signal` stops the source as in writeEntryFile. The caller bounds the size.
 */
export async function readWhole(contents: EntryContents, signal?: AbortSignal): Promise<EntryContents> {
  signal?.throwIfAborted();
  const stop = () => contents.stop();
  signal?.addEventListener('abort', stop, { once: true });
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of contents.chunks) chunks.push(chunk);
  } catch (err) {
    signal?.throwIfAborted();
    throw err;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  // One write for the file, not one per piece it arrived in.
  const whole = chunks.length === 1 ? chunks : [Buffer.concat(chunks)];
  return {
    chunks: (async function* () {
      yield* whole;
    })(),
    stop: () => {},
  };
}

/** Read once: setting it is the only way to read it, and nothing in the daemon changes it. */
const UMASK = process.umask();

/**
 * Writes one extracted file: open (creating it with its mode), write every chunk in full, close. Not stream.pipeline
 * into fs.createWriteStream: for a build's thousands of small files that pair's per-file machinery cost several
 * times the thread's time of the writes themselves. The file is new (the tree unlinks a name placed before), so
 * open gives it `mode` less the umask: a chmod, one more round trip per file, is needed only when the umask took
 * bits away (a build's 0644 and 0755 pass a 022 umask untouched). `signal` stops the source and is checked after
 * every write, since a stopped source that is asked for more may never answer. Every chunk is charged to `budget`
 * before it is written (the extraction's cap on unpacked bytes).
 */
export async function writeEntryFile(
  contents: EntryContents,
  dest: string,
  mode: number | null,
  signal?: AbortSignal,
  budget?: ByteBudget,
): Promise<void> {
  signal?.throwIfAborted();
  const stop = () => contents.stop();
  signal?.addEventListener('abort', stop, { once: true });
  // Server builds rely on the execute bit of their programs; drop setuid/setgid/sticky; ignore the umask.
  const perms = mode ? mode & 0o777 : null;
  try {
    const fd = await openFile(dest, perms ?? 0o666);
    try {
      for await (const chunk of contents.chunks) {
        budget?.charge(chunk.length);
        for (let at = 0; at < chunk.length; ) at += await writeSome(fd, chunk, at);
        signal?.throwIfAborted();
      }
      if (perms !== null && (perms & UMASK) !== 0) await setMode(fd, perms);
    } finally {
      await closeFile(fd);
    }
  } catch (err) {
    // The abort's own reason, not the "stream destroyed" it caused.
    signal?.throwIfAborted();
    throw err;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
