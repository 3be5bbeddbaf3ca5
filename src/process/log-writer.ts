import { appendFileSync, closeSync, type Stats, statSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { monotonicMs } from '../clock.ts';
import { makeDirSync } from '../make-dir.ts';
import { APPEND, openRegularSync } from '../regular-file.ts';
import { DEFAULT_ROTATION, type LogRotation, logPath, rotateIfFull, rotateLogs } from './log-file.ts';
import { createWriteOutage, type WriteHealth, type WriteOutage } from './write-outage.ts';

/**
 * Appends whole lines to `file` (a `server.log`, the daemon's `audit.log`), rotating when it would exceed `maxBytes`.
 * Never throws: a line that cannot be written is dropped and counted, tried again once per `retryMs`, the gap noted.
 * Synchronous, so lines stay whole and in order, yet it never waits: the file is proven regular when opened.
 */
export function createRotatingLogWriter(
  file: string,
  /** Read at each line when a function, so a configuration reload applies at once. */
  rotationOf: LogRotation | (() => LogRotation) = DEFAULT_ROTATION,
  /**
   * `retryMs`: while the file cannot be written, how often to try again (lines in between are dropped and counted).
   * `outage`: the file's, when it outlives this writer (one per launch), so an outage over several launches is told
   * once. `checkMs`: how often to check that the file is still the one held open (by default `retryMs`); 0 checks
   * before every line, so a removed file costs no line (audit.log). `noteGaps`: a line after an outage tells the loss.
   */
  opts: { retryMs?: number; health?: WriteHealth; outage?: WriteOutage; checkMs?: number; noteGaps?: boolean } = {},
) {
  const rotationNow = typeof rotationOf === 'function' ? rotationOf : () => rotationOf;
  const outage = opts.outage ?? createWriteOutage(opts.retryMs, opts.health);
  const checkMs = opts.checkMs ?? outage.retryMs;
  const noteGaps = opts.noteGaps ?? true;
  let fd: number | null = null;
  let ino = -1;
  let size = 0;
  let closed = false;
  /** A write failed part-way through a line: the next one starts on a line of its own. */
  let midLine = false;
  /** When to check that the file is still the one held open (`logs/` may be removed), and the lines since. */
  let checkAt = 0;
  let sinceCheck = 0;

  const open = (): void => {
    makeDirSync(dirname(file));
    // A named pipe the server put there fails this open (an outage) instead of holding the main thread.
    let st: Stats;
    ({ fd, stats: st } = openRegularSync(file, APPEND));
    ino = st.ino;
    size = st.size;
    checkAt = monotonicMs() + checkMs;
    sinceCheck = 0;
  };

  const release = (): void => {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        // Closing a descriptor whose device failed can fail too; it is gone either way.
      }
    }
    fd = null;
  };

  const checkStillThere = (force: boolean): void => {
    if (!force && monotonicMs() < checkAt) return;
    let now = -1;
    try {
      now = statSync(file).ino;
    } catch {
      // Gone: reopened below.
    }
    if (now === ino) {
      checkAt = monotonicMs() + checkMs;
      sinceCheck = 0;
      return;
    }
    const lost = sinceCheck;
    release();
    try {
      open();
    } catch (err) {
      // What now stands there (a named pipe, a full disk) is the outage's cause, not the removal.
      outage.failed(err, lost);
      throw err;
    }
    outage.failed(Object.assign(new Error(`${file} was removed`), { code: 'ENOENT' }), lost);
  };

  const write = (data: Buffer): void => {
    if (fd === null) throw new Error(`${file} is not open`);
    let done = 0;
    try {
      while (done < data.length) done += writeSync(fd, data, done, data.length - done);
    } catch (err) {
      midLine ||= done > 0;
      throw err;
    }
    size += data.length;
  };

  try {
    makeDirSync(dirname(file));
    rotateIfFull(file, rotationNow());
    open();
  } catch (err) {
    outage.failed(err, 0);
  }

  return {
    file,
    writeLine(line: string): void {
      if (closed) return;
      // Open means this writer has got through since the last failure (a shared outage may have begun before it).
      if (fd === null && !outage.mayTry()) {
        outage.drop(1);
        return;
      }
      try {
        let data = Buffer.from(line + '\n', 'utf8');
        const rotation = rotationNow();
        const rotating = () => size > 0 && size + data.length > rotation.maxBytes;
        // Checked before every rotation too: a rotation in a removed folder would otherwise recreate it silently,
        // and the lines written into the removed file would be lost uncounted.
        if (fd === null) open();
        else checkStillThere(rotating());
        if (outage.failing) {
          const { dropped, code } = outage;
          const note = noteGaps
            ? `${marker(`${dropped} line(s) dropped: ${basename(file)} could not be written (${code})`)}\n`
            : '';
          data = Buffer.concat([Buffer.from(`${midLine ? '\n' : ''}${note}`, 'utf8'), data]);
        }
        if (rotating()) {
          release();
          rotateLogs(file, rotation.keep, rotation.retention);
          open();
        }
        write(data);
        midLine = false;
        sinceCheck += 1;
        outage.succeeded();
      } catch (err) {
        release();
        outage.failed(err, 1);
      }
    },
    close(): void {
      closed = true;
      release();
    },
  };
}
export type RotatingLogWriter = ReturnType<typeof createRotatingLogWriter>;

/** A line the daemon adds to server.log: `--- <time> watchdog: <text> ---`. */
export function marker(text: string): string {
  return `--- ${new Date().toISOString()} watchdog: ${text} ---`;
}

/** Appends a daemon's line to a log the server holds open (PersistServers); false when it could not. */
export function appendMarkerLine(logDir: string, line: string): boolean {
  try {
    makeDirSync(logDir);
    const { fd } = openRegularSync(logPath(logDir), APPEND);
    try {
      appendFileSync(fd, line + '\n');
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}
