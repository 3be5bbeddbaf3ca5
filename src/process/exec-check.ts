import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';

function errno(code: string, program: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${program}`), { code, path: program });
}

/**
 * The error spawn() would give for `program`, found before it is launched through a wrapper shell: the shell would
 * report a missing program only as exit 127, and would run a file without `#!` as a shell script itself, where a
 * direct spawn fails with ENOEXEC. Null when it can be executed.
 */
export async function execError(program: string): Promise<NodeJS.ErrnoException | null> {
  try {
    await access(program, constants.X_OK);
    if ((await stat(program)).isDirectory()) return errno('EACCES', program);
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  const head = Buffer.alloc(4);
  try {
    const file = await open(program, 'r');
    try {
      await file.read(head, 0, 4, 0);
    } finally {
      await file.close();
    }
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  const script = head[0] === 0x23 && head[1] === 0x21; // #!
  const elf = head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  return script || elf ? null : errno('ENOEXEC', program);
}
