import { UpdateError } from '../errors.ts';
import { installFromUrl } from './artifact.ts';
import { describeUrl } from './download.ts';
import { basicAuthHeaders, fetchJson } from './http-json.ts';
import { newestBuild, parseManifest } from './manifest-doc.ts';
import { hostRid, pickPlatform, ridFallbacks } from './platform.ts';
import type { ProviderContext, UpdateProvider } from './provider.ts';

interface Target {
  key: string;
  platform: string;
  url: string;
  sha256: string | undefined;
}

/**
 * `UpdateType: Manifest` (spec §2.8, REFERENCE.md §8.1): the newest build of a manifest, the server archive for this
 * host's platform, hash required. Unlike the original, a failed install leaves bin/ as it was.
 */
export function createManifestProvider(ctx: ProviderContext): UpdateProvider {
  const updates = ctx.instance.settings.Updates;
  const headers = basicAuthHeaders(updates.Authentication);
  const timeoutMs = updates.DownloadTimeoutSeconds * 1000;
  const rid = hostRid(updates.Platform);

  async function newest(signal: AbortSignal): Promise<Target> {
    const manifestUrl = updates.ManifestUrl;
    if (!manifestUrl) {
      throw new UpdateError(`instance ${ctx.instance.key} uses UpdateType Manifest but sets no Updates.ManifestUrl`);
    }
    const where = describeUrl(manifestUrl);
    const doc = parseManifest(await fetchJson(manifestUrl, { what: 'manifest', headers, timeoutMs, signal }), where);
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

  return {
    type: 'Manifest',

    async check(current, signal) {
      const target = await newest(signal);
      return { available: target.key !== current, revision: target.key };
    },

    async apply(current, signal) {
      const target = await newest(signal);
      if (target.key === current) {
        ctx.log.info('the newest build is already installed', { revision: current });
        return target.key;
      }
      if (target.sha256 === undefined || target.sha256.trim() === '') {
        // REFERENCE.md Q15: the docs' do-it-yourself manifest leaves sha256 empty; installing unverified code is refused.
        throw new UpdateError(
          `build ${target.key} gives no sha256 for its ${target.platform} server archive, so the download cannot be ` +
            'verified and is refused; fill in the SHA-256 of each archive (watchdog manifest <dir> --base-url URL writes them)',
        );
      }
      ctx.log.info('installing build from manifest', { revision: target.key, platform: target.platform, url: describeUrl(target.url) });
      await installFromUrl(ctx, { url: target.url, sha256: target.sha256, headers, signal });
      return target.key;
    },
  };
}
