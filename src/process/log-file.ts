import {
  closeSync,
  constants,
  existsSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { openRegularSync } from '../regular-file.ts';
import { expired, type RetentionRule } from '../store/retention.ts';

/** `keep` files (server.log, .1 … .keep-1) of at most `maxBytes`; `retention` may remove rotated ones sooner. */
export interface LogRotation {
  maxBytes: number;
  keep: number;
  retention?: RetentionRule;
}

export const DEFAULT_ROTATION: LogRotation = { maxBytes: 10_000_000, keep: 5 };
export const LOG_NAME = 'server.log';
/** A longer line is cut, so a server printing without newlines cannot grow our buffer for ever. */
const MAX_LINE = 64_000;

/** `<logDir>/server.log`, or with `index` its rotated copy `server.log.<index>`. */
export function logPath(logDir: string, index = 0): string {
  return rotatedPath(join(logDir, LOG_NAME), index);
}

function rotatedPath(file: string, index: number): string {
  return index === 0 ? file : `${file}.${index}`;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Shifts file.N up by one, dropping the oldest, so that index 1 is free. */
function shiftRotated(file: string, keep: number): void {
  rmSync(rotatedPath(file, keep - 1), { force: true });
  for (let i = keep - 2; i >= 1; i--) {
    if (existsSync(rotatedPath(file, i))) renameSync(rotatedPath(file, i), rotatedPath(file, i + 1));
  }
}

/** Removes the rotated copies `rule` expires (the oldest, so the rest stay numbered in a row; never the newest). */
export function pruneRotated(file: string, keep: number, rule: RetentionRule | undefined, now = Date.now()): void {
  if (rule === undefined) return;
  const rotated: { id: string; index: number; at: number; bytes: number }[] = [];
  for (let index = 1; index < keep; index++) {
    try {
      const st = statSync(rotatedPath(file, index));
      // Equal times (a burst of rotations) sort by number: a higher one is older.
      rotated.push({ id: String(keep - index).padStart(3, '0'), index, at: st.mtimeMs, bytes: st.size });
    } catch {
      // Not there (yet): nothing to remove.
    }
  }
  for (const old of expired(rotated, rule, now)) rmSync(rotatedPath(file, old.index), { force: true });
}

/** Renames `file` to file.1 (shifting older ones); with keep = 1 it is dropped. */
export function rotateLogs(file: string, keep: number, retention?: RetentionRule): void {
  if (keep <= 1) {
    rmSync(file, { force: true });
    return;
  }
  shiftRotated(file, keep);
  if (existsSync(file)) renameSync(file, rotatedPath(file, 1));
  pruneRotated(file, keep, retention);
}

/**
 * Rotates when `file` has reached `maxBytes`, when a writer opens it. A file past its bound is rotated as its last
 * `maxBytes` only, so file.1 keeps the bound.
 */
export function rotateIfFull(file: string, rotation: LogRotation): boolean {
  const size = sizeOf(file);
  if (size < rotation.maxBytes) return false;
  if (size <= rotation.maxBytes || rotation.keep <= 1) {
    rotateLogs(file, rotation.keep, rotation.retention);
    return true;
  }
  shiftRotated(file, rotation.keep);
  copyCapped(file, rotatedPath(file, 1), rotation.maxBytes);
  rmSync(file, { force: true });
  pruneRotated(file, rotation.keep, rotation.retention);
  return true;
}

/**
 * Rotation for a file another process holds open with O_APPEND (PersistServers): copy it to file.1 (at most
 * `maxBytes`), then truncate it in place. Lines written in between are lost (logrotate's `copytruncate` trade-off).
 */
export function copyTruncate(file: string, keep: number, maxBytes = Infinity, retention?: RetentionRule): void {
  if (keep > 1) {
    shiftRotated(file, keep);
    copyCapped(file, rotatedPath(file, 1), maxBytes);
  }
  truncateSync(file, 0);
  pruneRotated(file, keep, retention);
}

/** Splits a byte stream into lines (LF or CRLF), decoding UTF-8 across chunk boundaries. */
export class LineSplitter {
  #decoder = new StringDecoder('utf8');
  #rest = '';

  push(chunk: Buffer | string): string[] {
    this.#rest += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const parts = this.#rest.split('\n');
    this.#rest = parts.pop() ?? '';
    const lines = parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    while (this.#rest.length > MAX_LINE) {
      lines.push(this.#rest.slice(0, MAX_LINE));
      this.#rest = this.#rest.slice(MAX_LINE);
    }
    return lines;
  }

  /** The unterminated last line, if any. */
  flush(): string | null {
    const rest = this.#rest + this.#decoder.end();
    this.#rest = '';
    return rest === '' ? null : rest;
  }
}

const CHUNK = 1024 * 1024;

/** A regular file's write can still be cut short by a signal. */
function writeAll(fd: number, buf: Buffer, n: number): void {
  for (let done = 0; done < n; ) done += writeSync(fd, buf, done, n - done);
}

/**
 * Copies `src` to `dst` keeping at most `maxBytes` (a rotated file's promised size): the oldest lines go, a note in
 * their place says how much; returns the bytes cut. Synchronous, as its rotations need, yet it never waits: both
 * files are proven regular when opened.
 */
export function copyCapped(src: string, dst: string, maxBytes: number): number {
  const { fd: from, stats } = openRegularSync(src);
  try {
    const size = stats.size;
    const buf = Buffer.allocUnsafe(CHUNK);
    let start = 0;
    let head = '';
    if (size > maxBytes) {
      // Its length up front, with the largest count it can say; a bound too small for it (tests) goes without.
      const text = (cut: number) =>
        `--- ${new Date().toISOString()} watchdog: ${cut} bytes cut from the start: server.log had grown past ` +
        `Logs.ServerLogMaxBytes before it was rotated ---\n`;
      const noted = Buffer.byteLength(text(size)) <= maxBytes / 2;
      start = size - (maxBytes - (noted ? Buffer.byteLength(text(size)) : 0));
      // A line is never cut in two: from the byte before, the first newline ends the last line cut. With no newline
      // in reach the cut falls where it must.
      const got = readSync(from, buf, 0, Math.min(CHUNK, size - start + 1), start - 1);
      const nl = buf.subarray(0, got).indexOf(0x0a);
      if (nl >= 0) start += nl;
      head = noted ? text(start) : '';
    }
    const to = openRegularSync(dst, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC).fd;
    try {
      writeSync(to, head);
      // To the end of what is there now (lines written since the fstat are kept, as a copy by path kept them), but
      // never past the bound, however fast the server writes meanwhile.
      let left = maxBytes - Buffer.byteLength(head);
      for (let at = start; left > 0; ) {
        const n = readSync(from, buf, 0, Math.min(CHUNK, left), at);
        if (n <= 0) break;
        writeAll(to, buf, n);
        at += n;
        left -= n;
      }
    } finally {
      closeSync(to);
    }
    return start;
  } finally {
    closeSync(from);
  }
}
