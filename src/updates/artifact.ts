import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { downloadVerified, describeUrl } from './download.ts';
import { installArchive, updateDir } from './install.ts';
import type { ProviderContext } from './provider.ts';

/**
 * Downloads a server archive into the instance's scratch folder (verifying `sha256` when given), then installs it
 * with `installArchive`. Progress goes to `ctx.progress`. The download is removed afterwards, whatever happens.
 */
export async function installFromUrl(
  ctx: ProviderContext,
  opts: { url: string; sha256?: string; headers?: Record<string, string>; signal: AbortSignal },
): Promise<void> {
  const { instance } = ctx;
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
    await installArchive({
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
