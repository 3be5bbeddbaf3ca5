import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a folder',
};

export type SecretFileResult = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Reads a token or password kept in its own file (relative paths against the working directory) and trims ONE
 * trailing newline, the one editors and `echo` add. The real watchdog keeps it, which makes the token
 * unusable over HTTP Basic; we trim it on purpose. Never throws.
 */
export async function readSecretFile(path: string, cwd: string): Promise<SecretFileResult> {
  const file = resolve(cwd, path);
  let text: string;
  try {
    // Only a regular file is opened: opening a FIFO blocks until something writes to it (a libuv thread held and the
    // loader, `watchdog check` included, hung for good), and a device such as /dev/zero never ends. A folder keeps
    // its own reason below.
    const info = await stat(file);
    if (!info.isFile() && !info.isDirectory()) return { ok: false, reason: `${file} is not a regular file` };
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : String(err);
    return { ok: false, reason: `cannot read ${file}: ${REASONS[code] ?? code}` };
  }
  const value = text.replace(/\r?\n$/, '');
  if (value === '') return { ok: false, reason: `${file} is empty` };
  return { ok: true, value };
}
