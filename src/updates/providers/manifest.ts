import { UpdateError } from '../../errors.ts';
import { describeUrl } from '../fetch/download.ts';
import { fetchJson } from '../fetch/http-json.ts';
import { newestBuild, parseManifest } from '../manifest/schema.ts';
import { hostRid, pickPlatform, ridFallbacks } from '../platform.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';
import { urlBuildProvider } from './artifact.ts';

/** `UpdateType: Manifest` (the real watchdog's `UpdateProviderManifest.cs`): this platform's archive, hash required. */
export function createManifestProvider(ctx: ProviderContext): UpdateProvider {
  const updates = ctx.instance.settings.Updates;
  const { Username: user, Password: password } = updates.Authentication ?? {};
  // Only when both parts are set, as the real watchdog sends it.
  const basic = user && password ? Buffer.from(`${user}:${password}`).toString('base64') : null;
  const headers: Record<string, string> = basic === null ? {} : { authorization: `Basic ${basic}` };
  const timeoutMs = updates.DownloadTimeoutSeconds * 1000;
  const maxBytes = updates.MaxManifestMegabytes * 1_000_000;
  const rid = hostRid(updates.Platform);

  return urlBuildProvider(ctx, 'Manifest', 'build from manifest', async (signal) => {
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
    const locate = async () => ({
      // Relative URLs are taken relative to the manifest, so a folder of files can be served as is.
      url: new URL(archive.url, manifestUrl).href,
      sha256: archive.sha256,
      headers,
      fields: { platform },
      // The upstream hosting docs' do-it-yourself manifest leaves sha256 empty; installing unverified code is refused.
      refused: archive.sha256?.trim()
        ? undefined
        : `build ${key} gives no sha256 for its ${platform} server archive, so the download cannot be verified and ` +
          'is refused; fill in the SHA-256 of each archive (watchdog manifest <dir> --base-url URL writes them)',
    });
    return { revision: key, locate };
  });
}
