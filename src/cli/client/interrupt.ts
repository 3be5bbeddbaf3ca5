/** Ctrl-C (and SIGTERM) as a promise, so `status --watch` or `logs -f` end with exit 0, not killed mid-write. */
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
    signalled,
    get interrupted(): boolean {
      return interrupted;
    },
    trigger,
    dispose(): void {
      process.off('SIGINT', trigger);
      process.off('SIGTERM', trigger);
    },
  };
}
export type Interruption = ReturnType<typeof onInterrupt>;
