import { lstat } from 'node:fs/promises';
import { commitStaged, discardStaged } from './install.ts';

/**
 * A build made ready ahead of its install: `check` downloads, verifies and extracts it (`prepare`), so a build that
 * cannot be installed is refused before the server is asked to leave, and the install after it left is only the
 * swap into `bin/`, which keeps the downtime short. One staged build per provider, named by the provider's id and
 * replaced by a newer one, kept only once made in full; work is serialised, so a check and an install never fetch
 * the same build twice or pull a folder from under each other. It lives in `.update/`, cleared at daemon start.
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
