import { lstat } from 'node:fs/promises';
import { commitStaged, discardStaged } from './install.ts';

/**
 * A build `check` made ready (`prepare`), so one that cannot be installed is refused before the server is asked to
 * leave and the install is only the swap. One per provider, by id, kept once made in full; work is serialised, so
 * nothing is fetched twice or pulled from under another. In `.update/`, cleared at daemon start.
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
    /** The staged folder for `id`: the one kept when still there, else `make()`'s, kept as `revision`'s. */
    prepare: (id: string, make: () => Promise<string>, revision: string) => exclusive(() => obtain(id, make, revision)),
    install: (id: string, make: () => Promise<string>, signal: AbortSignal, onPhase?: (phase: 'install') => void) =>
      exclusive(async () => {
        const dir = await obtain(id, make, null);
        ready = null;
        await commitStaged(instanceDir, dir, signal, onPhase);
      }),
    revision: (): string | null => ready?.revision ?? null,
  };
}
