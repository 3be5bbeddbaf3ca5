import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';

/**
 * For folders a game server can write: a named pipe there blocks a plain `open`; with O_NONBLOCK it returns at once
 * and fstat refuses anything but a regular file. O_NOCTTY keeps a terminal from becoming the daemon's.
 */
const NEVER_WAIT = constants.O_NONBLOCK | constants.O_NOCTTY;

const FOLDER = 'a folder';

export class NotRegularFileError extends Error {
  override name = 'NotRegularFileError';
  /** Errno-like, for callers that report a code. */
  readonly code: 'ENOTREG' | 'EISDIR';
  constructor(
    readonly path: string,
    kind: string,
    options?: ErrorOptions,
  ) {
    super(`${path} is not a regular file (${kind}); remove it or put a regular file there`, options);
    this.code = kind === FOLDER ? 'EISDIR' : 'ENOTREG';
  }
}

const kindOf = (s: Stats): string =>
  s.isFIFO()
    ? 'a named pipe'
    : s.isSocket()
      ? 'a socket'
      : s.isCharacterDevice() || s.isBlockDevice()
        ? 'a device'
        : s.isDirectory()
          ? FOLDER
          : 'a special file';

/** ENXIO: a write-only open of a named pipe nobody reads, or of a socket. */
const refusedOpen = (path: string, err: unknown): unknown =>
  (err as NodeJS.ErrnoException | null)?.code === 'ENXIO'
    ? new NotRegularFileError(path, 'a named pipe or socket', { cause: err })
    : err;

/** Opens `path` without ever waiting on it; a NotRegularFileError unless a regular file (`folders`: or a folder). */
export async function openRegular(
  path: string,
  flags: number = constants.O_RDONLY,
  opts: { folders?: boolean } = {},
): Promise<{ file: FileHandle; stats: Stats }> {
  const file = await open(path, flags | NEVER_WAIT).catch((err: unknown) => {
    throw refusedOpen(path, err);
  });
  try {
    const stats = await file.stat();
    if (stats.isFile() || (opts.folders && stats.isDirectory())) return { file, stats };
    throw new NotRegularFileError(path, kindOf(stats));
  } catch (err) {
    await file.close().catch(() => {});
    throw err;
  }
}

/** For code that writes synchronously on purpose or runs in a worker. */
export function openRegularSync(path: string, flags: number = constants.O_RDONLY): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flags | NEVER_WAIT);
  } catch (err) {
    throw refusedOpen(path, err);
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isFile()) return { fd, stats };
    throw new NotRegularFileError(path, kindOf(stats));
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Read on the thread pool. */
export async function readRegularFile(path: string): Promise<Buffer>;
export async function readRegularFile(path: string, encoding: 'utf8'): Promise<string>;
export async function readRegularFile(path: string, encoding?: 'utf8'): Promise<Buffer | string> {
  const { file } = await openRegular(path);
  try {
    return encoding ? await file.readFile(encoding) : await file.readFile();
  } finally {
    await file.close();
  }
}

/** The first `bytes`, fewer when it is shorter. */
export async function readRegularHead(path: string, bytes: number): Promise<Buffer> {
  const { file } = await openRegular(path);
  try {
    const head = Buffer.alloc(bytes);
    return head.subarray(0, (await file.read(head, 0, bytes, 0)).bytesRead);
  } finally {
    await file.close();
  }
}

/** Size and SHA-256 (lower-case hex), streamed. */
export async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of (await openRegular(path)).file.createReadStream()) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

export const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

/**
 * Makes way for a file written anew where a game server can write: then CREATE_NEW (O_CREAT|O_EXCL) never opens what
 * is there, so a named pipe planted ahead cannot park the thread that opens it.
 */
export const clearForWrite = (path: string): Promise<void> => rm(path, { force: true });
export const CREATE_NEW = 'wx';
