import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { DEFAULT_ROTATION, type LogRotation, logPath, rotateIfFull, rotateLogs } from './log-file.ts';
import { type WriteHealth, WriteOutage } from './write-outage.ts';

export interface LogWriterOptions {
  /** While the file cannot be written, how often to try again (ms); lines in between are dropped and counted. */
  retryMs?: number;
  health?: WriteHealth;
  /**
   * The file's outage when it outlives this writer (one per launch): an outage spanning several launches is then
   * reported once, and ends with the first line a later writer gets in. Without it the writer keeps its own,
   * from `retryMs` and `health`.
   */
  outage?: WriteOutage;
  /**
   * How often to check that the file is still the one held open (ms; by default the retry interval). 0 checks
   * before every line, so a removed file costs no line: for a file written rarely (audit.log).
   */
  checkMs?: number;
  /** Whether the first line after an outage is preceded by one saying what was lost; false for JSON lines. */
  noteGaps?: boolean;
}

/** The default for `Timing.LogRetrySeconds`. */
export const DEFAULT_LOG_RETRY_MS = 5000;

/**
 * Appends whole lines to `file` (a server's `server.log`, the daemon's `audit.log`), rotating when it would exceed
 * `maxBytes`. Never throws: a line that cannot be written (full disk, removed folder, lost permissions, …) is
 * dropped and counted, and the writer tries again once per `retryMs`, recreating the folder, until writing works;
 * then it notes the gap in the file.
 */
export class RotatingLogWriter {
  #fd: number | null = null;
  #ino = -1;
  #size = 0;
  #closed = false;
  /** A write failed part-way through a line: the next one starts on a line of its own. */
  #midLine = false;
  /** When to check that the file is still the one we hold open (someone may remove `logs/`). */
  #checkAt = 0;
  /** Lines written since that check: lost if the file turns out to have been removed. */
  #sinceCheck = 0;
  readonly #outage: WriteOutage;
  readonly #rotation: () => LogRotation;
  readonly #checkMs: number;
  readonly #noteGaps: boolean;

  /** `rotation` may be a function, read at each line, so a configuration reload applies at once. */
  constructor(
    readonly file: string,
    rotation: LogRotation | (() => LogRotation) = DEFAULT_ROTATION,
    opts: LogWriterOptions = {},
  ) {
    this.#rotation = typeof rotation === 'function' ? rotation : () => rotation;
    this.#outage = opts.outage ?? new WriteOutage(opts.retryMs ?? DEFAULT_LOG_RETRY_MS, opts.health);
    this.#checkMs = opts.checkMs ?? this.#outage.retryMs;
    this.#noteGaps = opts.noteGaps ?? true;
    try {
      mkdirSync(dirname(file), { recursive: true });
      rotateIfFull(file, this.#rotation());
      this.#open();
    } catch (err) {
      this.#outage.failed(err, 0);
    }
  }

  #open(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    this.#fd = openSync(this.file, 'a');
    const st = fstatSync(this.#fd);
    this.#ino = st.ino;
    this.#size = st.size;
    this.#checkAt = Date.now() + this.#checkMs;
    this.#sinceCheck = 0;
  }

  #release(): void {
    if (this.#fd !== null) {
      try {
        closeSync(this.#fd);
      } catch {
        // Closing a descriptor whose device failed can fail too; it is gone either way.
      }
    }
    this.#fd = null;
  }

  /** Reopens when the file is no longer the one held open (removed with its folder, or renamed away). */
  #checkStillThere(force: boolean): void {
    if (!force && Date.now() < this.#checkAt) return;
    let ino = -1;
    try {
      ino = statSync(this.file).ino;
    } catch {
      // Gone: reopened below.
    }
    if (ino === this.#ino) {
      this.#checkAt = Date.now() + this.#checkMs;
      this.#sinceCheck = 0;
      return;
    }
    const lost = this.#sinceCheck;
    this.#release();
    this.#outage.failed(Object.assign(new Error(`${this.file} was removed`), { code: 'ENOENT' }), lost);
    this.#open();
  }

  #write(data: Buffer): void {
    if (this.#fd === null) throw new Error(`${this.file} is not open`);
    let done = 0;
    try {
      while (done < data.length) done += writeSync(this.#fd, data, done, data.length - done);
    } catch (err) {
      this.#midLine ||= done > 0;
      throw err;
    }
    this.#size += data.length;
  }

  writeLine(line: string): void {
    if (this.#closed) return;
    // Open means this writer has got through since the last failure (a shared outage may have begun before it).
    if (this.#fd === null && !this.#outage.mayTry()) {
      this.#outage.drop(1);
      return;
    }
    try {
      let data = Buffer.from(line + '\n', 'utf8');
      const rotation = this.#rotation();
      const rotating = () => this.#size > 0 && this.#size + data.length > rotation.maxBytes;
      // Checked before every rotation too: a rotation in a removed folder would otherwise recreate it silently,
      // and the lines written into the removed file would be lost uncounted.
      if (this.#fd === null) this.#open();
      else this.#checkStillThere(rotating());
      if (this.#outage.failing) {
        const { dropped, code } = this.#outage;
        const note = this.#noteGaps
          ? `${marker(`${dropped} line(s) dropped: ${basename(this.file)} could not be written (${code})`)}\n`
          : '';
        data = Buffer.concat([Buffer.from(`${this.#midLine ? '\n' : ''}${note}`, 'utf8'), data]);
      }
      if (rotating()) {
        this.#release();
        rotateLogs(this.file, rotation.keep, rotation.retention);
        this.#open();
      }
      // Synchronous appends keep stdout and stderr lines whole and in order; a game server's log rate
      // is far below what this costs the event loop.
      this.#write(data);
      this.#midLine = false;
      this.#sinceCheck += 1;
      this.#outage.succeeded();
    } catch (err) {
      this.#release();
      this.#outage.failed(err, 1);
    }
  }

  close(): void {
    this.#closed = true;
    this.#release();
  }
}

/** A line the daemon itself adds to server.log: `--- <time> watchdog: <text> ---`. */
export function marker(text: string): string {
  return `--- ${new Date().toISOString()} watchdog: ${text} ---`;
}

/**
 * Appends one of the daemon's own lines (`marker`, `exitMarker`) to a log the server holds open (PersistServers);
 * false when it could not (the caller counts it), never an exception.
 */
export function appendMarkerLine(logDir: string, line: string): boolean {
  try {
    mkdirSync(logDir, { recursive: true });
    appendFileSync(logPath(logDir), line + '\n');
    return true;
  } catch {
    return false;
  }
}
