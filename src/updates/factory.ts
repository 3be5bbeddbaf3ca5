import type { ResolvedInstance } from '../config/resolved.ts';
import type { UpdateType } from '../config/schema.ts';
import type { ProviderContext, UpdateProvider } from './provider.ts';
import { createCiServerProvider } from './providers/ci-server.ts';
import { createDummyProvider } from './providers/dummy.ts';
import { createGitProvider } from './providers/git.ts';
import { createLocalProvider } from './providers/local.ts';
import { createManifestProvider } from './providers/manifest.ts';

/** Whether a reload changed what a provider was made from; if not it is kept, with its staged builds and hashes. */
export function providerSettingsChanged(before: ResolvedInstance, after: ResolvedInstance): boolean {
  const made = (i: ResolvedInstance) =>
    JSON.stringify([i.dir, i.settings.UpdateType, i.settings.Updates, i.settings.RunCommand]);
  return made(before) !== made(after);
}

/** Every `UpdateType`'s provider: a new UPDATE_TYPES entry does not compile until it is added here. */
const PROVIDERS: Record<UpdateType, (ctx: ProviderContext) => UpdateProvider> = {
  Manifest: createManifestProvider,
  CiServer: createCiServerProvider,
  Git: createGitProvider,
  Local: createLocalProvider,
  Dummy: createDummyProvider,
};

/** The provider of an instance's `UpdateType`, or null without one; each checks its own `Updates` keys. */
export function createProvider(ctx: ProviderContext): UpdateProvider | null {
  const type = ctx.instance.settings.UpdateType;
  return type === undefined ? null : PROVIDERS[type](ctx);
}
