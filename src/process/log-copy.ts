import { closeSync, copyFileSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';

const CHUNK = 1024 * 1024;

/**
 * Copies `src` to `dst` keeping at most `maxBytes`: a file that grew past its bound while no watchdog followed it
 * (the daemon down or restarting, a leftover being shut down) or faster than one look to the next must not carry
 * the excess into a rotated file, whose size is promised to operators. The oldest lines go, from a line start, and
 * a note in their place says how much. Returns the bytes cut (0: a plain copy).
 */
export function copyCapped(src: string, dst: string, maxBytes: number): number {
  const from = openSync(src, 'r');
  try {
    const size = fstatSync(from).size;
    if (size <= maxBytes) {
      copyFileSync(src, dst);
      return 0;
    }
    // Its length up front, with the largest count it can say; a bound too small for it (tests) goes without.
    const text = (cut: number) =>
      `--- ${new Date().toISOString()} watchdog: ${cut} bytes cut from the start: server.log had grown past ` +
      `Logs.ServerLogMaxBytes before it was rotated ---\n`;
    const noted = Buffer.byteLength(text(size)) <= maxBytes / 2;
    const note = (cut: number) => (noted ? text(cut) : '');
    let start = size - (maxBytes - Buffer.byteLength(note(size)));
    const buf = Buffer.allocUnsafe(CHUNK);
    // A line is never cut in two: from the byte before, the first newline ends the last line cut. With no newline
    // in reach the cut falls where it must.
    const got = readSync(from, buf, 0, Math.min(CHUNK, size - start + 1), start - 1);
    const nl = buf.subarray(0, got).indexOf(0x0a);
    if (nl >= 0) start += nl;
    const to = openSync(dst, 'w');
    try {
      writeSync(to, note(start));
      for (let at = start; at < size; ) {
        const n = readSync(from, buf, 0, Math.min(CHUNK, size - at), at);
        if (n <= 0) break;
        writeSync(to, buf, 0, n);
        at += n;
      }
    } finally {
      closeSync(to);
    }
    return start;
  } finally {
    closeSync(from);
  }
}
