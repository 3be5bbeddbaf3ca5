import { join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';
import { createClientCvars, findClientZip } from './local-client.ts';

/**
 * `UpdateType: Local` (the real watchdog's `UpdateProviderLocal.cs`): an update adopts `Updates.CurrentVersion` for
 * the `bin/` the operator manages; launches get the `build.*` cvars of the client zip in `binaries/`.
 */
export function createLocalProvider(ctx: ProviderContext): UpdateProvider {
  const { instance } = ctx;
  const clientCvars = createClientCvars({ key: instance.key, dir: instance.dir, publicBaseUrl: ctx.publicBaseUrl });

  const currentVersion = (): string => {
    const version = instance.settings.Updates.CurrentVersion;
    if (version === undefined || version.trim() === '') {
      throw new UpdateError(
        `instance ${instance.key}: UpdateType Local needs Updates.CurrentVersion (the name of the build in bin/)`,
      );
    }
    return version;
  };

  return {
    type: 'Local',
    async check(current) {
      const version = currentVersion();
      return { available: version !== current, revision: version };
    },
    async apply(_current, signal) {
      if (signal.aborted) throw new UpdateError('the Local update was cancelled', { cause: signal.reason });
      const version = currentVersion();
      ctx.log.info('adopting the build in bin/ as named by Updates.CurrentVersion', { revision: version });
      return version;
    },
    async launchCvars() {
      const zip = await findClientZip(join(instance.dir, 'binaries'), instance.settings.Updates.ClientZip);
      return clientCvars(zip);
    },
  };
}
