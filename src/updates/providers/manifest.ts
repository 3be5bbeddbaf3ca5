import { UpdateError } from '../../errors.ts';
import { describeUrl } from '../fetch/download.ts';
import { basicAuthHeaders, fetchJson } from '../fetch/http-json.ts';
import { createStagedBuilds } from '../install/staged-build.ts';
import { newestBuild, parseManifest } from '../manifest/schema.ts';
import { hostRid, pickPlatform, ridFallbacks } from '../platform.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';
import { prepareFromUrl } from './artifact.ts';

interface Target {
  key: string;
  platform: string;
  url: string;
  sha256: string | undefined;
}

/**
 * `UpdateType: Manifest` (the real watchdog's `UpdateProviderManifest.cs`): the newest build of a manifest, the
 * server archive for this host's platform, hash required. Unlike the original, a failed install leaves bin/ as it
 * was, and `check` only offers a build after downloading, verifying and extracting it (install/staged-build.ts): a build that
 * cannot be installed is a failed check, so the running server is never asked to leave for it.
 */
export function createManifestProvider(ctx: ProviderContext): UpdateProvider {
  const updates = ctx.instance.settings.Updates;
  const headers = basicAuthHeaders(updates.Authentication);
  const timeoutMs = updates.DownloadTimeoutSeconds * 1000;
  const maxBytes = updates.MaxManifestMegabytes * 1_000_000;
  const rid = hostRid(updates.Platform);
  const staged = createStagedBuilds(ctx.instance.dir);

  async function newest(signal: AbortSignal): Promise<Target> {
    const manifestUrl = updates.ManifestUrl;
    if (!manifestUrl) {
      throw new UpdateError(`instance ${ctx.instance.key} uses UpdateType Manifest but sets no Updates.ManifestUrl`);
    }
    const where = describeUrl(manifestUrl);
    const doc = parseManifest(
      await fetchJson(manifestUrl, { what: 'manifest', headers, timeoutMs, maxBytes, signal }),
      where,
    );
    const found = newestBuild(doc);
    if (!found) throw new UpdateError(`the manifest at ${where} lists no builds`);
    const { key, build } = found;
    const offered = Object.keys(build.server);
    const platform = pickPlatform(offered, rid);
    const archive = platform === undefined ? undefined : build.server[platform];
    if (platform === undefined || !archive) {
      throw new UpdateError(
        `build ${key} in the manifest at ${where} has no server archive for this platform ${rid} ` +
          `(tried ${ridFallbacks(rid).join(', ')}; it offers ${offered.join(', ') || 'none'}); ` +
          'publish one, or set Updates.Platform if this host can run one of those',
      );
    }
    // Relative URLs are taken relative to the manifest, so a folder of files can be served as is.
    return { key, platform, url: new URL(archive.url, manifestUrl).href, sha256: archive.sha256 };
  }

  /** Downloads, verifies and extracts `target` into a staging folder, or reuses the one staged for it before. */
  const stage = (target: Target, signal: AbortSignal) => {
    const id = JSON.stringify([target.key, target.url, target.sha256]);
    const make = () => {
      if (target.sha256 === undefined || target.sha256.trim() === '') {
        // The upstream hosting docs' do-it-yourself manifest leaves sha256 empty; installing unverified code is refused.
        throw new UpdateError(
          `build ${target.key} gives no sha256 for its ${target.platform} server archive, so the download cannot be ` +
            'verified and is refused; fill in the SHA-256 of each archive (watchdog manifest <dir> --base-url URL writes them)',
        );
      }
      ctx.log.info('fetching build from manifest', {
        revision: target.key,
        platform: target.platform,
        url: describeUrl(target.url),
      });
      return prepareFromUrl(ctx, { url: target.url, sha256: target.sha256, headers, signal });
    };
    return { id, make };
  };

  return {
    type: 'Manifest',

    async check(current, signal) {
      const target = await newest(signal);
      if (target.key === current) return { available: false, revision: target.key };
      const { id, make } = stage(target, signal);
      await staged.prepare(id, make, target.key);
      return { available: true, revision: target.key };
    },

    async apply(current, signal) {
      const target = await newest(signal);
      if (target.key === current) {
        ctx.log.info('the newest build is already installed', { revision: current });
        return target.key;
      }
      const { id, make } = stage(target, signal);
      ctx.log.info('installing build from manifest', { revision: target.key, platform: target.platform });
      await staged.install(id, make, signal, (phase) => ctx.progress({ phase }));
      return target.key;
    },

    staged: () => staged.revision(),
  };
}
