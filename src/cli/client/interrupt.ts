/**
 * Turns Ctrl-C (and SIGTERM) into a promise, so long-running commands (`status --watch`,
 * `logs -f`) end cleanly with exit 0 instead of being killed mid-write.
 */
export function onInterrupt() {
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
    /** Resolves on the first SIGINT or SIGTERM (or `trigger()`). */
    signalled,
    get interrupted(): boolean {
      return interrupted;
    },
    trigger,
    /** Removes the signal handlers; call when the command ends either way. */
    dispose(): void {
      process.off('SIGINT', trigger);
      process.off('SIGTERM', trigger);
    },
  };
}
export type Interruption = ReturnType<typeof onInterrupt>;
