import { monotonicMs } from '../clock.ts';

/** The errno code of `err` (`ENOSPC`), or `error` for anything without one. */
export function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'error';
}

/** What a writer reports about its file (once per outage when it fails). */
export interface WriteHealth {
  onFailing?(code: string, message: string): void;
  onDropped?(lines: number): void;
  onResumed?(dropped: number): void;
}

/**
 * One file's write outage: when it began, how many lines it cost, and when the writer may try again. Between
 * attempts lines are dropped without touching the file system, so a full disk costs no more than a counter
 * increment per line, and the disk is probed at most once per `retryMs` (by default `Timing.LogRetrySeconds`' 5 s).
 */
export function createWriteOutage(retryMs = 5000, health: WriteHealth = {}, now: () => number = monotonicMs) {
  let failing = false;
  let dropped = 0;
  let retryAt = 0;
  let code = '';
  const drop = (lines: number): void => {
    if (lines <= 0) return;
    dropped += lines;
    call(() => health.onDropped?.(lines));
  };
  return {
    retryMs,
    get failing(): boolean {
      return failing;
    },
    /** The errno code that began the current (or last) outage. */
    get code(): string {
      return code;
    },
    get dropped(): number {
      return dropped;
    },
    /** Whether to try the file now: always while it works, once per `retryMs` while it does not. */
    mayTry: (): boolean => !failing || now() >= retryAt,
    failed(err: unknown, lines: number): void {
      if (!failing) {
        failing = true;
        code = errorCode(err);
        call(() => health.onFailing?.(code, err instanceof Error ? err.message : String(err)));
      }
      retryAt = now() + retryMs;
      drop(lines);
    },
    drop,
    /** Ends the outage, if there was one, and returns what it cost. */
    succeeded(): number {
      if (!failing) return 0;
      const cost = dropped;
      failing = false;
      dropped = 0;
      call(() => health.onResumed?.(cost));
      return cost;
    },
  };
}
export type WriteOutage = ReturnType<typeof createWriteOutage>;

function call(hook: () => void): void {
  try {
    hook();
  } catch {
    // A reporter's bug must not turn a handled write failure into an unhandled one.
  }
}
