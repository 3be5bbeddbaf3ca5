import { type Endpoint, fetchAllStatus } from './http.ts';
import { UnknownInstanceError } from './instances.ts';
import type { Target } from './target.ts';

/** How long the list of instances may take when it only decorates an error message. */
const LIST_TIMEOUT_MS = 3000;

/**
 * Runs `body` against instance `key` of the target's daemon (its address, the key's token); an unknown instance is
 * reported with the instances that do exist.
 */
export async function atInstance<T>(target: Target, key: string, body: (ep: Endpoint) => Promise<T>): Promise<T> {
  const url = await target.url();
  return withInstanceList(target, async () => body({ url, key, authorization: await target.authorization(key) }));
}

/**
 * Runs `body`; an unknown instance it runs into is reported with the instances that do exist: the daemon's
 * `GET /api/instances` (with Admin credentials when given, else as a loopback client), else the local config's.
 * Only on that error path, so a command that succeeds never makes the extra request.
 */
export async function withInstanceList<T>(target: Target, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof UnknownInstanceError) || err.known !== undefined) throw err;
    const keys = (rows: readonly { key: string }[] | undefined) => rows?.map((r) => r.key);
    const fromDaemon = async () =>
      keys(await fetchAllStatus(await target.url(), await target.login(), LIST_TIMEOUT_MS));
    const fromConfig = async () => keys((await target.localConfig())?.instances);
    const known = (await fromDaemon().catch(() => undefined)) ?? (await fromConfig().catch(() => undefined));
    throw new UnknownInstanceError(err.key, known, { cause: err });
  }
}
