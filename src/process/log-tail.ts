import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { NotRegularFileError, openRegular, openRegularSync } from '../regular-file.ts';
import { LineSplitter, logPath } from './log-file.ts';

const CHUNK = 1_000_000;
/**
 * The most read per poll: the reads are synchronous (of a descriptor proven regular, so they never wait), and a log
 * stretched to gigabytes is read over several polls, never in one that stalls the event loop.
 */
const POLL_BYTES = 4 * CHUNK;
/** The most read for the last lines, all files together: a thousand 64 kB lines, and no more for a huge log. */
const TAIL_BYTES = 8_000_000;

/** The last `max` bytes of `path` and the offset they start at; null when missing or not a regular file. */
async function tailOf(path: string, max: number): Promise<{ bytes: Buffer; from: number } | null> {
  const opened = await openRegular(path).catch(() => null);
  if (opened === null) return null;
  try {
    const from = Math.max(0, opened.stats.size - max);
    const bytes = Buffer.alloc(opened.stats.size - from);
    const { bytesRead } = await opened.file.read(bytes, 0, bytes.length, from);
    return { bytes: bytes.subarray(0, bytesRead), from };
  } finally {
    await opened.file.close();
  }
}

/** Its lines (LF or CRLF), less the first when the bytes start mid-file. */
function linesOf(bytes: Buffer, from: number): string[] {
  const nl = from === 0 ? -1 : bytes.indexOf(0x0a);
  const text = from > 0 && nl < 0 ? '' : bytes.subarray(nl + 1).toString('utf8');
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/**
 * The last `n` complete lines of `<logDir>/server.log` (reaching into server.log.1, .2 … when it is short), oldest
 * first; an unterminated last line (`partial`); and the offset after the last complete line, where `followLines`
 * continues: no line printed twice or skipped between the tail and the follow.
 */
export async function readLastLines(
  logDir: string,
  n: number,
): Promise<{ lines: string[]; partial: string | null; offset: number; found: boolean }> {
  // The server can put anything at these paths: a named pipe is read as no file at all, never waited on.
  const current = await tailOf(logPath(logDir), TAIL_BYTES);
  if (current === null) return { lines: [], partial: null, offset: 0, found: false };
  const end = current.bytes.lastIndexOf(0x0a) + 1;
  const rest = current.bytes.subarray(end).toString('utf8');
  let lines = linesOf(current.bytes.subarray(0, end), current.from);
  let budget = TAIL_BYTES - current.bytes.length;
  for (let i = 1; lines.length < n && budget > 0; i++) {
    const older = await tailOf(logPath(logDir, i), budget);
    if (older === null) break;
    budget -= older.bytes.length;
    lines = [...linesOf(older.bytes, older.from), ...lines];
  }
  const offset = current.from + end;
  return { lines: n <= 0 ? [] : lines.slice(-n), partial: rest === '' ? null : rest, offset, found: true };
}

/**
 * Passes on lines appended to server.log from `offset` on (following rotation) until `until` resolves; then reads
 * what is left and stops. Resolves to the offset reached, where a later `followLines` picks up.
 */
export async function followLines(
  logDir: string,
  offset: number,
  write: (line: string) => void,
  until: Promise<void>,
): Promise<number> {
  let reached = offset;
  const follower = followLog(logDir, write, { startOffset: offset, intervalMs: 200, onPoll: (at) => (reached = at) });
  // followLog's timer is unref'd; here following is the whole point.
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    await until;
  } finally {
    clearInterval(keepAlive);
    follower.stop();
  }
  return reached;
}

/** `stop()` reads what is new first and passes on an unterminated last line. */
export type LogFollower = { poll(): void; stop(): void };

/**
 * Follows `<logDir>/server.log` like `tail -F`, through rotation by rename and truncation. Starts at the end of the
 * file unless `startOffset` is given; a file that does not exist yet is read from its start once it appears.
 */
export function followLog(
  logDir: string,
  onLine: (line: string) => void,
  opts: {
    intervalMs?: number;
    startOffset?: number;
    /**
     * `orphaned`: server.log is no longer this file (removed, or replaced) while it is still being read. `truncate()`
     * empties the followed file in place, even when removed (through /proc/self/fd); `emptied()` says it was just
     * emptied by path, so it is read from its start (a fast writer would refill it past the old offset).
     */
    onPoll?: (size: number, file: { orphaned: boolean; truncate(): void; emptied(): void }) => void;
    /**
     * false: never leave the file first opened for one that replaced it, and say so (`file.orphaned`): a server that
     * writes its log itself (PersistServers) goes on writing the file it was given, even after someone removed it.
     */
    followRenames?: boolean;
    /** Opens this path at the start instead of server.log (falling back to it): an adopted server's removed log. */
    source?: string;
  } = {},
): LogFollower {
  const path = logPath(logDir);
  let fd: number | null = null;
  /** `fd` was opened for writing too: it can be emptied with no new descriptor. */
  let writable = false;
  let ino = -1;
  let offset = 0;
  let splitter = new LineSplitter();
  let stopped = false;

  const open = (start: number | 'end', from = path): boolean => {
    let st: Stats;
    try {
      // Read-write where allowed (never written through: O_RDWR without O_APPEND or O_TRUNC changes nothing), so a
      // rotation can still empty the file when the daemon is out of descriptors.
      ({ fd, stats: st } = openRegularSync(from, constants.O_RDWR));
      writable = true;
    } catch (err) {
      if (err instanceof NotRegularFileError) return false;
      try {
        ({ fd, stats: st } = openRegularSync(from, constants.O_RDONLY));
        writable = false;
      } catch {
        return false;
      }
    }
    ino = st.ino;
    offset = start === 'end' ? st.size : Math.min(start, st.size);
    return true;
  };

  const drain = (): void => {
    if (fd === null) return;
    const size = fstatSync(fd).size;
    if (size < offset) {
      // Truncated in place (copytruncate): what is there now is new.
      offset = 0;
      splitter = new LineSplitter();
    }
    const buf = Buffer.allocUnsafe(CHUNK);
    const end = Math.min(size, offset + POLL_BYTES);
    while (offset < end) {
      const got = readSync(fd, buf, 0, Math.min(CHUNK, end - offset), offset);
      if (got <= 0) break;
      offset += got;
      for (const line of splitter.push(buf.subarray(0, got))) onLine(line);
    }
  };

  const rewind = (): void => {
    // What the splitter holds is the head of a line whose rest went with the truncation or the rotation.
    const last = splitter.flush();
    if (last !== null) onLine(last);
    splitter = new LineSplitter();
    offset = 0;
  };

  const truncateHeld = (): void => {
    if (fd === null) return;
    if (writable) ftruncateSync(fd, 0);
    else {
      // Our descriptor is read-only; the proc link opens the same file (proven regular), removed or not, for writing.
      const rw = openSync(`/proc/self/fd/${fd}`, 'r+');
      try {
        ftruncateSync(rw, 0);
      } finally {
        closeSync(rw);
      }
    }
    rewind();
  };

  const poll = (): void => {
    if (stopped) return;
    try {
      // A file that appears after we started following is new in its entirety.
      if (fd === null && !open(missingAtStart ? 0 : (opts.startOffset ?? 'end'))) return;
      drain();
      let currentIno = ino;
      let gone = false;
      try {
        currentIno = statSync(path).ino;
      } catch {
        // Renamed away and not recreated yet: keep the old file until it is.
        gone = true;
      }
      if ((gone || currentIno !== ino) && fd !== null && opts.followRenames === false) {
        opts.onPoll?.(offset, { orphaned: true, truncate: truncateHeld, emptied: rewind });
        return;
      }
      if (currentIno !== ino && fd !== null) {
        closeSync(fd);
        fd = null;
        rewind();
        if (open(0)) drain();
      }
      if (fd !== null) opts.onPoll?.(offset, { orphaned: false, truncate: truncateHeld, emptied: rewind });
    } catch {
      // A vanished file or a racing rotation: the next tick tries again.
    }
  };

  const missingAtStart =
    !(opts.source !== undefined && open(opts.startOffset ?? 'end', opts.source)) && !open(opts.startOffset ?? 'end');
  const timer = setInterval(poll, opts.intervalMs ?? 250);
  timer.unref();
  return {
    poll,
    stop() {
      if (stopped) return;
      poll();
      stopped = true;
      clearInterval(timer);
      rewind();
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
