import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { type WriteHealth, WriteOutage } from '../process/write-outage.ts';

export interface FileRotation {
  /** Rotate before a line would take the file past this size. */
  maxBytes: number;
  /** Files kept, the current one included: `file`, `file.1` … `file.<keep-1>`. */
  keep: number;
}

/**
 * Appends lines to one file that rotates by size (audit.log), never throwing: while the file cannot be written
 * (full disk, removed folder) lines are dropped and counted, and writing is tried again once per `retryMs`,
 * recreating the folder. Synchronous, for a file whose line rate its callers already bound.
 */
export class RotatingFile {
  #size = -1;
  readonly #outage: WriteOutage;

  readonly #rotation: () => FileRotation;

  /** `rotation` may be a function, read at each line, so a configuration reload applies at once. */
  constructor(
    readonly file: string,
    rotation: FileRotation | (() => FileRotation),
    opts: { retryMs?: number; health?: WriteHealth } = {},
  ) {
    this.#rotation = typeof rotation === 'function' ? rotation : () => rotation;
    this.#outage = new WriteOutage(opts.retryMs ?? 5000, opts.health);
  }

  /** Lines lost in the current outage (0 while writing works). */
  get dropped(): number {
    return this.#outage.dropped;
  }

  append(line: string): void {
    if (!this.#outage.mayTry()) {
      this.#outage.drop(1);
      return;
    }
    const data = Buffer.from(line.endsWith('\n') ? line : `${line}\n`, 'utf8');
    try {
      // Measured once and then tracked; a failed write measures again, as it may have written part of a line.
      if (this.#size < 0) this.#size = sizeOf(this.file);
      const rotation = this.#rotation();
      if (this.#size > 0 && this.#size + data.length > rotation.maxBytes) this.#rotate(rotation.keep);
      mkdirSync(dirname(this.file), { recursive: true });
      appendFileSync(this.file, data);
      this.#size += data.length;
      this.#outage.succeeded();
    } catch (err) {
      this.#size = -1;
      this.#outage.failed(err, 1);
    }
  }

  #rotate(keep: number): void {
    const name = (i: number) => (i === 0 ? this.file : `${this.file}.${i}`);
    rmSync(name(keep - 1), { force: true });
    for (let i = keep - 2; i >= 0; i--) if (existsSync(name(i))) renameSync(name(i), name(i + 1));
    // keep = 1: the rename loop is empty and the one file was just removed.
    this.#size = 0;
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
