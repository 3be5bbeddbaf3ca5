import type { ResolvedInstance } from '../config/resolved.ts';
import type { ProviderContext, UpdateProvider } from './provider.ts';
import { createCiServerProvider } from './providers/ci-server.ts';
import { createDummyProvider } from './providers/dummy.ts';
import { createGitProvider } from './providers/git.ts';
import { createLocalProvider } from './providers/local.ts';
import { createManifestProvider } from './providers/manifest.ts';

/**
 * Whether a reload changed what an instance's provider was made from (its type, `Updates`, `RunCommand`, folder).
 * When not, the provider is kept: with its staged builds and cached hashes.
 */
export function providerSettingsChanged(before: ResolvedInstance, after: ResolvedInstance): boolean {
  const made = (i: ResolvedInstance) =>
    JSON.stringify([i.dir, i.settings.UpdateType, i.settings.Updates, i.settings.RunCommand]);
  return made(before) !== made(after);
}

/**
 * The update provider an instance's `UpdateType` names, or null when it has none (no automatic
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
