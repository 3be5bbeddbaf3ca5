import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/*
 * `mkdir -p` for every folder the watchdog makes. Node's `recursive: true` never returns where a folder exists but
 * the kernel answers ENOENT for a child of it (under /proc or /sys, or in a mount whose folder was deleted): it makes
 * the parent (EEXIST), tries the child again (ENOENT), and loops at 100 % CPU, the synchronous form with the event
 * loop blocked (openclaw/openclaw#130807 met it in production). Here an ENOENT once the parent exists is final.
 */

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;
const isFolderThere = (err: unknown, path: string) =>
  code(err) === 'EEXIST' && statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
const isFolderThereAsync = async (err: unknown, path: string) =>
  code(err) === 'EEXIST' && (await stat(path).catch(() => null))?.isDirectory() === true;
/** Whether a failed first try is worth making the parent for. */
const parentMissing = (err: unknown, path: string) => code(err) === 'ENOENT' && dirname(path) !== path;

export async function makeDir(path: string, mode?: number): Promise<void> {
  try {
    await mkdir(path, { mode });
    return;
  } catch (err) {
    if (await isFolderThereAsync(err, path)) return;
    if (!parentMissing(err, path)) throw err;
  }
  await makeDir(dirname(path), mode);
  try {
    await mkdir(path, { mode });
  } catch (err) {
    if (!(await isFolderThereAsync(err, path))) throw err;
  }
}

export function makeDirSync(path: string, mode?: number): void {
  try {
    mkdirSync(path, { mode });
    return;
  } catch (err) {
    if (isFolderThere(err, path)) return;
    if (!parentMissing(err, path)) throw err;
  }
  makeDirSync(dirname(path), mode);
  try {
    mkdirSync(path, { mode });
  } catch (err) {
    if (!isFolderThere(err, path)) throw err;
  }
}
