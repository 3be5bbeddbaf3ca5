import { createCiServerProvider } from './ci-server.ts';
import { createDummyProvider } from './dummy.ts';
import { createGitProvider } from './git.ts';
import { createLocalProvider } from './local.ts';
import { createManifestProvider } from './manifest.ts';
import type { ProviderContext, UpdateProvider } from './provider.ts';

/**
 * The update provider an instance's `UpdateType` names (spec §2.7), or null when it has none (no automatic
 * updates). Config validation has already refused unknown types; providers check their own `Updates` keys.
 */
export function createProvider(ctx: ProviderContext): UpdateProvider | null {
  const type = ctx.instance.settings.UpdateType;
  switch (type) {
    case 'Manifest':
      return createManifestProvider(ctx);
    case 'CiServer':
      return createCiServerProvider(ctx);
    case 'Git':
      return createGitProvider(ctx);
    case 'Local':
      return createLocalProvider(ctx);
    case 'Dummy':
      return createDummyProvider(ctx);
    case undefined:
      return null;
    default: {
      // Exhaustive: a new UPDATE_TYPES entry must be handled here.
      const unknown: never = type;
      throw new Error(`unknown UpdateType ${String(unknown)}`);
    }
  }
}
