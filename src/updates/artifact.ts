import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { downloadVerified, describeUrl } from './download.ts';
import { commitStaged, stageArchive, updateDir } from './install.ts';
import type { ProviderContext } from './provider.ts';

export interface ArtifactSource {
  url: string;
  sha256?: string;
  headers?: Record<string, string>;
  signal: AbortSignal;
}

/**
 * Downloads a server archive into the instance's scratch folder (verifying `sha256` when given) and extracts it into
 * a staging folder (`stageArchive`), returned for `commitStaged`. Nothing in `bin/` is touched, so a provider can do
 * this while the server still runs. Progress goes to `ctx.progress`. The download is removed, whatever happens.
 */
export async function prepareFromUrl(ctx: ProviderContext, opts: ArtifactSource): Promise<string> {
  const { instance } = ctx;
  // One download at a time per instance: providers serialise their preparations (staged-build.ts).
  const archive = join(updateDir(instance.dir), 'download.part');
  try {
    ctx.progress({ phase: 'download', bytes: 0, total: null });
    const { bytes } = await downloadVerified({
      url: opts.url,
      dest: archive,
      sha256: opts.sha256,
      headers: opts.headers,
      timeoutMs: instance.settings.Updates.DownloadTimeoutSeconds * 1000,
      signal: opts.signal,
      onProgress: (done, total) => ctx.progress({ phase: 'download', bytes: done, total }),
    });
    ctx.progress({ phase: 'verify', bytes, total: bytes });
    ctx.log.info('downloaded server archive', { url: describeUrl(opts.url), bytes, verified: opts.sha256 !== undefined });
    return await stageArchive({
      archive,
      instanceDir: instance.dir,
      runCommand: instance.settings.RunCommand,
      signal: opts.signal,
      onPhase: (phase) => ctx.progress({ phase }),
    });
  } finally {
    await rm(archive, { force: true });
  }
}

/** `prepareFromUrl`, then swaps the staged build into `bin/` (the old one becomes `bin.prev`). */
export async function installFromUrl(ctx: ProviderContext, opts: ArtifactSource): Promise<void> {
  const staging = await prepareFromUrl(ctx, opts);
  await commitStaged(ctx.instance.dir, staging, opts.signal, (phase) => ctx.progress({ phase }));
}
