import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describeUrl } from '../fetch/download.ts';
import { fetchArchiveOffThread } from '../fetch/off-thread.ts';
import { limitsOf } from '../install/disk-guard.ts';
import { stageBuild, updateDir } from '../install/install.ts';
import type { ProviderContext } from '../provider.ts';

export interface ArtifactSource {
  url: string;
  sha256?: string;
  headers?: Record<string, string>;
  signal: AbortSignal;
}

/**
 * Downloads a server archive (verifying `sha256` when given) into a staging folder, returned for `commitStaged`: a
 * tar or tar.gz is extracted as it arrives, a zip is saved in the instance's scratch folder and extracted once
 * complete (archive/sink.ts), all in a worker thread (fetch/off-thread.ts). Nothing in `bin/` is touched, so a
 * provider can do this while the server still runs. Progress goes to `ctx.progress`. The saved download is
 * removed, whatever happens.
 */
export async function prepareFromUrl(ctx: ProviderContext, opts: ArtifactSource): Promise<string> {
  const { instance } = ctx;
  // One download at a time per instance: providers serialise their preparations (install/staged-build.ts).
  const archive = join(updateDir(instance.dir), 'download.part');
  const stage = { instanceDir: instance.dir, runCommand: instance.settings.RunCommand, signal: opts.signal };
  const limits = limitsOf(instance.settings.Updates);
  try {
    return await stageBuild(stage, async (staging) => {
      ctx.progress({ phase: 'download', bytes: 0, total: null });
      const job = {
        download: {
          url: opts.url,
          sha256: opts.sha256,
          headers: opts.headers,
          timeoutMs: instance.settings.Updates.DownloadTimeoutSeconds * 1000,
        },
        archive,
        staging,
        limits,
      };
      await fetchArchiveOffThread(job, opts.signal, {
        onProgress: (bytes, total) => ctx.progress({ phase: 'download', bytes, total }),
        onDownloaded: (bytes, extracted) => {
          ctx.progress({ phase: 'verify', bytes, total: bytes });
          ctx.log.info(extracted ? 'downloaded and extracted server archive' : 'downloaded server archive', {
            url: describeUrl(opts.url),
            bytes,
            verified: opts.sha256 !== undefined,
          });
          if (!extracted) ctx.progress({ phase: 'extract' });
        },
      });
    });
  } finally {
    await rm(archive, { force: true });
  }
}
