/**
 * Writes an archive's entries a few at a time. Extracting a build is thousands of small files, each a chain of
 * file-system round trips on the thread pool; one at a time, the disk and the thread pool mostly wait. Files with
 * distinct names may be written side by side; anything else (a folder, a link, a name being written already) waits
 * until everything before it is done, so the archive's order still decides what a later entry finds (links that
 * must not be gone through, a later entry of the same name replacing an earlier one).
 */
export interface EntryPool {
  /**
   * Starts `write` once it may run: beside others when `name` is a file's path, alone when `name` is null. Resolves
   * when it has started (or, alone, finished); throws the first failure of any earlier write instead.
   */
  run(name: string | null, write: () => Promise<void>): Promise<void>;
  /** Waits for every write; throws the first failure. */
  finish(): Promise<void>;
  /** Waits for every write, whatever they did (before cleaning up after a failure). */
  idle(): Promise<void>;
}

const ALONE = Symbol('alone');

export function createEntryPool(limit: number): EntryPool {
  const running = new Map<Promise<void>, string | typeof ALONE>();
  let failure: { error: unknown } | null = null;

  const idle = async () => {
    while (running.size > 0) await Promise.all(running.keys());
  };
  const rethrow = () => {
    if (failure) throw failure.error;
  };
  const track = (write: () => Promise<void>, name: string | typeof ALONE): Promise<void> => {
    const task: Promise<void> = write()
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(task));
    running.set(task, name);
    return task;
  };

  return {
    async run(name, write) {
      const names = [...running.values()];
      if (name === null || names.includes(name) || names.includes(ALONE)) await idle();
      while (running.size >= limit) await Promise.race(running.keys());
      rethrow();
      if (name !== null) return void track(write, name);
      await track(write, ALONE);
      rethrow();
    },
    async finish() {
      await idle();
      rethrow();
    },
    idle,
  };
}
