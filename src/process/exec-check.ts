import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';

/**
 * The error spawn() would give for `program`, found before it is launched through a wrapper shell, which would
 * report a missing or non-executable program only as exit 127 or 126, a startup failure without a reason. (A file
 * without `#!` runs as a shell script either way: libuv's execvp and the shell's `exec` both fall back to /bin/sh.)
 * Null when it can be executed.
 */
export async function execError(program: string): Promise<NodeJS.ErrnoException | null> {
  try {
    await access(program, constants.X_OK);
    if ((await stat(program)).isDirectory()) {
      return Object.assign(new Error(`EACCES: ${program} is a folder`), { code: 'EACCES', path: program });
    }
    return null;
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}
