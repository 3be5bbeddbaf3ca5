import type { ProviderContext, UpdateProvider } from '../provider.ts';
import { commitStaged, discardStaged, exists } from './install.ts';

/**
 * A provider whose `check` stages a new build (`make`), so one that cannot be installed is refused before the server
 * is asked to leave, and whose `apply` is then only the swap. One staged build, by id, kept once made in full; work
 * is serialised, so nothing is fetched twice or pulled from under another. In `.update/`, cleared at daemon start.
 * `installed` says whether the current revision's build is still in place; `afterInstall` follows the swap.
 */
export function stagedProvider(
  ctx: ProviderContext,
  opts: {
    type: string;
    what: string;
    /** The newest build: its revision, and (asked only when it is not the one installed) how to stage it. */
    newest: (signal: AbortSignal) => Promise<{
      revision: string;
      stage(): Promise<{ id: string; make: () => Promise<string>; fields: Record<string, string> }>;
    }>;
    installed?: () => Promise<boolean>;
    afterInstall?: (revision: string) => Promise<void>;
  },
): UpdateProvider {
  let ready: { id: string; dir: string; revision: string | null } | null = null;
  let queue: Promise<unknown> = Promise.resolve();

  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const obtain = async (id: string, make: () => Promise<string>, revision: string | null): Promise<string> => {
    if (ready?.id === id && (await exists(ready.dir))) {
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
    type: opts.type,
    async check(current, signal) {
      const build = await opts.newest(signal);
      if (build.revision === current) return { available: false, revision: build.revision };
      const { id, make } = await build.stage();
      await exclusive(() => obtain(id, make, build.revision));
      return { available: true, revision: build.revision };
    },
    async apply(current, signal) {
      const build = await opts.newest(signal);
      if (build.revision === current && (await (opts.installed?.() ?? true))) {
        ctx.log.info('the newest build is already installed', { revision: current });
        return build.revision;
      }
      const { id, make, fields } = await build.stage();
      ctx.log.info(`installing ${opts.what}`, fields);
      await exclusive(async () => {
        const dir = await obtain(id, make, null);
        ready = null;
        await commitStaged(ctx.instance.dir, dir, signal, (phase) => ctx.progress({ phase }));
      });
      await opts.afterInstall?.(build.revision);
      return build.revision;
    },
    staged: () => ready?.revision ?? null,
  };
}
