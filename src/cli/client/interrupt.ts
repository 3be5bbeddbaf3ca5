export interface Interruption {
  /** Resolves on the first SIGINT or SIGTERM (or `trigger()`). */
  readonly signalled: Promise<void>;
  readonly interrupted: boolean;
  trigger(): void;
  /** Removes the signal handlers; call when the command ends either way. */
  dispose(): void;
}

/**
 * Turns Ctrl-C (and SIGTERM) into a promise, so long-running commands (`status --watch`,
 * `logs -f`) end cleanly with exit 0 instead of being killed mid-write.
 */
export function onInterrupt(): Interruption {
  let resolve: () => void = () => {};
  const signalled = new Promise<void>((r) => (resolve = r));
  let interrupted = false;
  const trigger = () => {
    interrupted = true;
    resolve();
  };
  process.on('SIGINT', trigger);
  process.on('SIGTERM', trigger);
  return {
    signalled,
    get interrupted() {
      return interrupted;
    },
    trigger,
    dispose() {
      process.off('SIGINT', trigger);
      process.off('SIGTERM', trigger);
    },
  };
}
