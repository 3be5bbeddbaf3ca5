import type { ResolvedInstance } from '../config/resolved.ts';
import type { ProviderContext, UpdateProvider } from './provider.ts';
import { createDummyProvider } from './providers/dummy.ts';

type Loaded = (ctx: ProviderContext) => Promise<UpdateProvider>;

/** The providers that download, extract or build, loaded on first use: most daemons need one of them or none. */
const LOADERS: Record<'Manifest' | 'CiServer' | 'Git' | 'Local', Loaded> = {
  Manifest: async (ctx) => (await import('./providers/manifest.ts')).createManifestProvider(ctx),
  CiServer: async (ctx) => (await import('./providers/ci-server.ts')).createCiServerProvider(ctx),
  Git: async (ctx) => (await import('./providers/git.ts')).createGitProvider(ctx),
  Local: async (ctx) => (await import('./providers/local.ts')).createLocalProvider(ctx),
};

/**
 * A provider whose module (and its archive, HTTP and git code) is imported at its first call, not at daemon start:
 * a daemon of Dummy instances, like the embedded default, starts without any of it.
 */
function lazyProvider(type: keyof typeof LOADERS, ctx: ProviderContext): UpdateProvider {
  let loaded: Promise<UpdateProvider> | null = null;
  let ready: UpdateProvider | null = null;
  // A failure is not kept: the next call tries again (a transient error must not disable updates for good).
  const provider = () =>
    (loaded ??= LOADERS[type](ctx).then(
      (p) => {
        ready = p;
        return p;
      },
      (err: unknown) => {
        loaded = null;
        throw err;
      },
    ));
  return {
    type,
    check: async (current, signal) => (await provider()).check(current, signal),
    apply: async (current, signal) => (await provider()).apply(current, signal),
    // By the first launch the check has loaded the provider; those that host no client add nothing.
    // Not loaded yet means no check ran, so nothing is staged.
    staged: () => ready?.staged?.() ?? null,
    launchCvars: async (revision) => (await (await provider()).launchCvars?.(revision)) ?? [],
  };
}

/**
 * Whether a reload changed what an instance's provider was made from (its type, `Updates`, `RunCommand`, folder).
 * When not, the provider is kept: with its loaded module, staged builds and cached hashes.
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
    case 'CiServer':
    case 'Git':
    case 'Local':
      return lazyProvider(type, ctx);
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
