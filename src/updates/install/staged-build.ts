import { lstat } from 'node:fs/promises';
import { commitStaged, discardStaged } from './install.ts';

/**
 * A build made ready ahead of its install. A provider's `check` downloads, verifies and extracts the build it is
 * about to offer (`prepare`), so a build that cannot be installed (bad hash, cut download, unsafe or corrupt
 * archive) is refused before the running server is asked to leave; the `apply` after the server left then only
 * swaps the staged folder into `bin/` (`install`), which also keeps the downtime of an update short.
 *
 * One provider keeps at most one staged build, named by an id the provider chooses (what would be installed: key,
 * URL and hash). Work is serialised, so a check and an install running at once never fetch the same build twice or
 * pull a folder from under each other. A staged folder lives in `.update/`, which the daemon clears at start.
 */
export interface StagedBuilds {
  /** The staged folder for `id`: the one kept from before when still there, else `make()`'s (kept for later). */
  prepare(id: string, make: () => Promise<string>): Promise<string>;
  /** `prepare`, then swaps the folder into `bin/` and forgets it. */
  install(
    id: string,
    make: () => Promise<string>,
    signal: AbortSignal,
    onPhase?: (phase: 'install') => void,
  ): Promise<void>;
}

export function createStagedBuilds(instanceDir: string): StagedBuilds {
  let ready: { id: string; dir: string } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const obtain = async (id: string, make: () => Promise<string>): Promise<string> => {
    if (
      ready?.id === id &&
      (await lstat(ready.dir).then(
        () => true,
        () => false,
      ))
    )
      return ready.dir;
    if (ready) await discardStaged(ready.dir);
    ready = null;
    const dir = await make();
    ready = { id, dir };
    return dir;
  };

  return {
    prepare: (id, make) => exclusive(() => obtain(id, make)),
    install: (id, make, signal, onPhase) =>
      exclusive(async () => {
        const dir = await obtain(id, make);
        ready = null;
        await commitStaged(instanceDir, dir, signal, onPhase);
      }),
  };
}
