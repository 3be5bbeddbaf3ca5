/** The errno code of `err` (`ENOSPC`), or `error` for anything without one. */
export function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'error';
}

/** What a writer reports about its file; every hook is optional and must not throw. */
export interface WriteHealth {
  /** Writing stopped working (once per outage): lines are dropped from now on. */
  onFailing?(code: string, message: string): void;
  /** `lines` were not written. */
  onDropped?(lines: number): void;
  /** Writing works again; `dropped` lines were lost during the outage. */
  onResumed?(dropped: number): void;
}

/**
 * One file's write outage: when it began, how many lines it cost, and when the writer may try again. Between
 * attempts lines are dropped without touching the file system, so a full disk costs no more than a counter
 * increment per line, and the disk is probed at most once per `retryMs`.
 */
export class WriteOutage {
  #failing = false;
  #dropped = 0;
  #retryAt = 0;
  #code = '';

  constructor(
    readonly retryMs: number,
    private readonly health: WriteHealth = {},
    private readonly now: () => number = Date.now,
  ) {}

  get failing(): boolean {
    return this.#failing;
  }

  /** The errno code that began the current (or last) outage: `ENOSPC`. */
  get code(): string {
    return this.#code;
  }

  /** Lines lost in the current outage. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Whether to try the file now: always while it works, once per `retryMs` while it does not. */
  mayTry(): boolean {
    return !this.#failing || this.now() >= this.#retryAt;
  }

  /** An attempt failed; `lines` it was carrying are lost. */
  failed(err: unknown, lines: number): void {
    if (!this.#failing) {
      this.#failing = true;
      this.#code = errorCode(err);
      call(() => this.health.onFailing?.(this.#code, err instanceof Error ? err.message : String(err)));
    }
    this.#retryAt = this.now() + this.retryMs;
    this.drop(lines);
  }

  /** Lines skipped while waiting for the next attempt. */
  drop(lines: number): void {
    if (lines <= 0) return;
    this.#dropped += lines;
    call(() => this.health.onDropped?.(lines));
  }

  /** An attempt worked; ends the outage, if there was one, and returns what it cost. */
  succeeded(): number {
    if (!this.#failing) return 0;
    const dropped = this.#dropped;
    this.#failing = false;
    this.#dropped = 0;
    call(() => this.health.onResumed?.(dropped));
    return dropped;
  }
}

function call(hook: () => void): void {
  try {
    hook();
  } catch {
    // A reporter's bug must not turn a handled write failure into an unhandled one.
  }
}
