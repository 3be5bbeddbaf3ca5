import { type Endpoint, fetchAllStatus } from './http.ts';
import { type InstanceSources, namingInstances } from './instances.ts';
import type { Target } from './target.ts';

/** How long the list of instances may take when it only decorates an error message. */
const LIST_TIMEOUT_MS = 3000;

/**
 * The instance lists a command can show for an unknown key: the daemon's `GET /api/instances` (with Admin
 * credentials when given, else as a loopback client), then the local config.
 */
export function instanceSources(target: Target): InstanceSources {
  return {
    fromDaemon: async () =>
      (await fetchAllStatus(await target.url(), target.admin(), LIST_TIMEOUT_MS)).map((r) => r.key),
    fromLocalConfig: async () => (await target.localConfig())?.instances.map((i) => i.key),
  };
}

/**
 * Runs `body` against instance `key` of the target's daemon (its address, the key's token); an unknown instance is
 * reported with the instances that do exist.
 */
export async function atInstance<T>(target: Target, key: string, body: (ep: Endpoint) => Promise<T>): Promise<T> {
  const url = await target.url();
  return withInstanceList(target, async () => body({ url, key, token: await target.token(key) }));
}

/** Runs `body`; an unknown instance it runs into is reported with the instances that do exist. */
export async function withInstanceList<T>(target: Target, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw await namingInstances(err, instanceSources(target));
  }
}
