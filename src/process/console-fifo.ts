import { execFile } from 'node:child_process';
import { close, constants, open as openFd } from 'node:fs';
import { lstat, open, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { commandProblem } from '../config/sections/console-hub.ts';
import { describeError } from '../errors.ts';

/**
 * A server's console: a FIFO in the instance folder that is the server's standard input, read line by line by the
 * engine with full server-console rights. The server gets it opened read-write, so it never sees end-of-file while no
 * writer holds it (the next daemon, adopting the server, writes to the same FIFO). Each command is one `write` of at
 * most PIPE_BUF bytes, so commands from two senders never mix.
 */

export const CONSOLE_FIFO = 'console.fifo';

const pOpen = promisify(openFd);

export class ConsoleError extends Error {
  override name = 'ConsoleError';
  constructor(
    /** `invalid`: a newline, control characters or too long; `not-reading`: no server holds the console. */
    readonly reason: 'invalid' | 'not-reading' | 'failed',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Makes `path` a FIFO (replacing a stale file of another kind) and opens it read-write for the server's stdin. */
export async function openConsoleForServer(path: string): Promise<number> {
  const info = await lstat(path).catch(() => null);
  if (info !== null && !info.isFIFO()) await rm(path, { force: true, recursive: true });
  if (info === null || !info.isFIFO()) {
    // Node has no mkfifo; coreutils' is on every Linux the daemon runs on.
    await promisify(execFile)('mkfifo', ['-m', '600', path], { timeout: 10_000 }).catch((err: unknown) => {
      throw new ConsoleError('failed', `cannot make the console FIFO ${path}: ${describeError(err)}`, { cause: err });
    });
  }
  // O_RDWR on a FIFO does not wait for a writer (Linux), and the server holding a write end never reads EOF.
  // Blocking: the server reads it as its stdin, and .NET does not expect EAGAIN there.
  return pOpen(path, constants.O_RDWR);
}

/**
 * The server's stdin for a launch: the console FIFO opened read-write, or null without a console. A console that
 * cannot be made never keeps the game down: the server starts without one and `problem` says why (its log).
 */
export async function consoleStdin(
  path: string | null | undefined,
  problem: (message: string) => void,
): Promise<number | null> {
  if (!path) return null;
  try {
    return await openConsoleForServer(path);
  } catch (err) {
    problem(`the console is off for this run: ${describeError(err)}`);
    return null;
  }
}

/** After the spawn: the child holds its own copy; the daemon writes through fresh opens. */
export function closeConsoleStdin(fd: number | null): void {
  if (fd !== null) close(fd, () => {});
}

/** Writes one command line to the server's console, never blocking: `not-reading` when no server reads it. */
export async function sendConsoleCommand(path: string, command: string): Promise<void> {
  const problem = commandProblem(command);
  if (problem !== null) throw new ConsoleError('invalid', `refused: ${problem}`);
  const handle = await open(path, constants.O_WRONLY | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENXIO' || err.code === 'ENOENT')
      throw new ConsoleError(
        'not-reading',
        'the server has no console open (it is not running, or was started before Console was enabled)',
        { cause: err },
      );
    throw new ConsoleError('failed', `cannot open the console ${path}: ${describeError(err)}`, { cause: err });
  });
  try {
    const line = Buffer.from(`${command}\n`, 'utf8');
    const { bytesWritten } = await handle.write(line, 0, line.length, null);
    if (bytesWritten !== line.length) throw new Error(`only ${bytesWritten} of ${line.length} bytes were written`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN')
      throw new ConsoleError('not-reading', "the server's console input is full: it is not reading commands", {
        cause: err,
      });
    throw err instanceof ConsoleError
      ? err
      : new ConsoleError('failed', `cannot write to the console: ${describeError(err)}`, { cause: err });
  } finally {
    await handle.close().catch(() => {});
  }
}
