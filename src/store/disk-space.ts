import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

/** `dev`: two folders with the same one share their space; `freeBytes` for the unprivileged (not root's reserve). */
export async function diskSpaceOf(path: string) {
  const [info, fs] = await Promise.all([stat(path), statfs(path)]);
  return {
    mount: await mountPointOf(path, info.dev),
    dev: info.dev,
    freeBytes: fs.bavail * fs.bsize,
    totalBytes: fs.blocks * fs.bsize,
  };
}

async function mountPointOf(path: string, dev: number): Promise<string> {
  let here = path;
  for (;;) {
    const up = dirname(here);
    if (up === here) return here;
    const info = await stat(up).catch(() => null);
    if (!info || info.dev !== dev) return here;
    here = up;
  }
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

export function diskFullError(err: unknown): NodeJS.ErrnoException | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && FULL_CODES.has(code)) return e;
  }
  return null;
}

const UNITS = ['bytes', 'kB', 'MB', 'GB', 'TB', 'PB'];

/**
 * Decimal units as `df -H` counts (`9.8 GB`): the one unit of every size a person reads or writes, as the dashboard's
 * copy (src/http/dashboard/assets/shared.js) and the `*MB`/`*GB` config keys.
 */
export function formatBytes(bytes: number): string {
  let n = Math.max(0, bytes);
  let unit = 0;
  while (n >= 1000 && unit < UNITS.length - 1) {
    n /= 1000;
    unit++;
  }
  if (unit === 0) return `${Math.round(n)} bytes`;
  const digits = n < 10 ? 1 : 0;
  return `${n.toFixed(digits).replace(/\.0$/, '')} ${UNITS[unit]}`;
}

/** A share of a whole as people read it: `1.2 %`, `37 %`, `0 %`. */
export function formatPercent(part: number, whole: number): string {
  if (whole <= 0) return '0 %';
  const p = (part / whole) * 100;
  return `${p < 10 ? p.toFixed(1).replace(/\.0$/, '') : Math.round(p)} %`;
}
