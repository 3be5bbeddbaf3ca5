import * as v from 'valibot';
import { UpdateError } from '../../errors.ts';
import { archiveHasPlatform, isClientArchiveName } from '../archive/names.ts';
import { describeUrl } from '../fetch/download.ts';
import { fetchJson } from '../fetch/http-json.ts';
import { hostRid, ridFallbacks } from '../platform.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';
import { type ArchiveLocation, urlBuildProvider } from './artifact.ts';

/** `<BaseUrl>/job/<JobName>/api/json` and `…/<n>/api/json` (artifacts, when listed). */
const JobSchema = v.looseObject({
  lastSuccessfulBuild: v.nullish(v.looseObject({ number: v.pipe(v.number(), v.integer()) })),
});
const BuildSchema = v.looseObject({
  artifacts: v.optional(v.array(v.looseObject({ fileName: v.string(), relativePath: v.optional(v.string()) }))),
});

const DEFAULT_ARTIFACT_PATTERN = 'SS14.Server_{rid}.zip';

/**
 * The server archive with the most specific platform key of this host's chain (matching `pattern` when set), or
 * without a list `release/<pattern with this host's RID>`, as the original does.
 */
export function chooseArtifact(
  artifacts: Array<{ fileName: string; relativePath?: string }> | undefined,
  rid: string,
  pattern: string | undefined,
): string | undefined {
  if (!artifacts) return `release/${(pattern ?? DEFAULT_ARTIFACT_PATTERN).replaceAll('{rid}', rid)}`;
  for (const key of ridFallbacks(rid)) {
    const match = artifacts.find((a) =>
      pattern
        ? a.fileName === pattern.replaceAll('{rid}', key)
        : !isClientArchiveName(a.fileName) && archiveHasPlatform(a.fileName, key),
    );
    if (match) return match.relativePath ?? `release/${match.fileName}`;
  }
  return undefined;
}

/** `UpdateType: CiServer` (the real watchdog's `UpdateProviderJenkins.cs`): no hash to verify. */
export function createCiServerProvider(ctx: ProviderContext): UpdateProvider {
  const updates = ctx.instance.settings.Updates;
  const timeoutMs = updates.DownloadTimeoutSeconds * 1000;
  const maxBytes = updates.MaxManifestMegabytes * 1_000_000;
  const rid = hostRid(updates.Platform);

  function jobUrl(): string {
    if (!updates.BaseUrl || !updates.JobName) {
      throw new UpdateError(
        `instance ${ctx.instance.key} uses UpdateType CiServer but lacks Updates.BaseUrl or Updates.JobName`,
      );
    }
    return `${updates.BaseUrl.replace(/\/+$/, '')}/job/${encodeURIComponent(updates.JobName)}`;
  }

  async function lastSuccessful(signal: AbortSignal): Promise<number> {
    const url = `${jobUrl()}/api/json`;
    const parsed = v.safeParse(JobSchema, await fetchJson(url, { what: 'CI job', timeoutMs, maxBytes, signal }));
    if (!parsed.success)
      throw new UpdateError(`the CI job at ${describeUrl(url)} does not look like a CI job API answer`);
    const build = parsed.output.lastSuccessfulBuild;
    if (!build) throw new UpdateError(`the CI job at ${describeUrl(url)} has no successful build yet`);
    return build.number;
  }

  async function artifactList(n: number, signal: AbortSignal) {
    try {
      const parsed = v.safeParse(
        BuildSchema,
        await fetchJson(`${jobUrl()}/${n}/api/json`, { what: 'CI build', timeoutMs, maxBytes, signal }),
      );
      return parsed.success ? parsed.output.artifacts : undefined;
    } catch (err) {
      if (signal.aborted) throw err;
      return undefined; // Optional: without the list the conventional name is used.
    }
  }

  async function locate(n: number, signal: AbortSignal): Promise<ArchiveLocation> {
    const artifacts = await artifactList(n, signal);
    const path = chooseArtifact(artifacts, rid, updates.ArtifactPattern);
    if (!path) {
      const names = artifacts?.map((a) => a.fileName).join(', ') || 'none';
      throw new UpdateError(
        `CI build ${n} has no server archive for this platform ${rid} (tried ${ridFallbacks(rid).join(', ')}; artifacts: ${names}); ` +
          'set Updates.ArtifactPattern (with {rid}) or Updates.Platform',
      );
    }
    // No hash in the CI API: the archive is trusted as far as it downloads completely and extracts cleanly.
    return { url: `${jobUrl()}/${n}/artifact/${path.split('/').map(encodeURIComponent).join('/')}` };
  }

  return urlBuildProvider(ctx, 'CiServer', 'CI build', async (signal) => {
    const n = await lastSuccessful(signal);
    return { revision: String(n), locate: () => locate(n, signal) };
  });
}
