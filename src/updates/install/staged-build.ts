import { lstat } from 'node:fs/promises';
import { commitStaged, discardStaged } from './install.ts';

/**
 * A build made ready ahead of its install. A provider's `check` downloads, verifies and extracts the build it is
 * about to offer (`prepare`), so a build that cannot be installed (bad hash, cut download, unsafe or corrupt
 * archive) is refused before the running server is asked to leave; the `apply` after the server left then only
 * swaps the staged folder into `bin/` (`install`), which also keeps the downtime of an update short.
 *
 * One provider keeps at most one staged build, named by an id the provider chooses (what would be installed: key,
 * URL and hash); a newer build prepared later replaces it, and a folder is only kept once it was made in full. Work
 * is serialised, so a check and an install running at once never fetch the same build twice or pull a folder from
 * under each other. A staged folder lives in `.update/`, which the daemon clears at start.
 */
export function createStagedBuilds(instanceDir: string) {
  let ready: { id: string; dir: string; revision: string | null } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const obtain = async (id: string, make: () => Promise<string>, revision: string | null): Promise<string> => {
    if (ready?.id === id && (await lstat(ready.dir).catch(() => null))) {
      if (revision !== null) ready.revision = revision;
      return ready.dir;
    }
    if (ready) await discardStaged(ready.dir);
    ready = null;
    const dir = await make();
    ready = { id, dir, revision };
    return dir;
  };

  return {
    /**
     * The staged folder for `id`: the one kept from before when still there, else `make()`'s (kept for later, as the
     * build of `revision`).
     */
    prepare: (id: string, make: () => Promise<string>, revision: string) => exclusive(() => obtain(id, make, revision)),
    /** `prepare`, then swaps the folder into `bin/` and forgets it. */
    install: (id: string, make: () => Promise<string>, signal: AbortSignal, onPhase?: (phase: 'install') => void) =>
      exclusive(async () => {
        const dir = await obtain(id, make, null);
        ready = null;
        await commitStaged(instanceDir, dir, signal, onPhase);
      }),
    /** The revision of the build staged and waiting for its install, or null (none, or it was installed). */
    revision: (): string | null => ready?.revision ?? null,
  };
}
