import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { describeUrl } from '../fetch/download.ts';
import { fetchArchiveOffThread } from '../fetch/off-thread.ts';
import { limitsOf } from '../install/disk-guard.ts';
import { stageBuild, updateDir } from '../install/install.ts';
import { stagedProvider } from '../install/staged-build.ts';
import type { ProviderContext, UpdateProvider } from '../provider.ts';

/** A server archive: `fields` go into its log lines; `refused` says why it may not be fetched. */
export interface ArchiveLocation {
  url: string;
  sha256?: string;
  headers?: Record<string, string>;
  fields?: Record<string, string>;
  refused?: string;
}

async function prepareFromUrl(ctx: ProviderContext, opts: ArchiveLocation & { signal: AbortSignal }): Promise<string> {
  const { instance } = ctx;
  // One name will do: providers serialise their preparations (install/staged-build.ts).
  const archive = join(updateDir(instance.dir), 'download.part');
  const stage = { instanceDir: instance.dir, runCommand: instance.settings.RunCommand, signal: opts.signal };
  const limits = limitsOf(instance.settings.Updates);
  const { url, sha256, headers } = opts;
  const download = { url, sha256, headers, timeoutMs: instance.settings.Updates.DownloadTimeoutSeconds * 1000 };
  try {
    return await stageBuild(stage, async (staging) => {
      ctx.progress({ phase: 'download', bytes: 0, total: null });
      await fetchArchiveOffThread({ download, archive, staging, limits }, opts.signal, {
        onProgress: (bytes, total) => ctx.progress({ phase: 'download', bytes, total }),
        onDownloaded: (bytes, extracted) => {
          ctx.progress({ phase: 'verify', bytes, total: bytes });
          ctx.log.info(extracted ? 'downloaded and extracted server archive' : 'downloaded server archive', {
            url: describeUrl(url),
            bytes,
            verified: sha256 !== undefined,
          });
          if (!extracted) ctx.progress({ phase: 'extract' });
        },
      });
    });
  } finally {
    await rm(archive, { force: true });
  }
}

type FoundBuild = { revision: string; locate(): Promise<ArchiveLocation> };

/**
 * A source of server archives at a URL (Manifest, CiServer): `check` stages a new build, `apply` swaps it in.
 * `newest` gives the newest build; its archive is located only when it is not the one installed.
 */
export function urlBuildProvider(
  ctx: ProviderContext,
  type: string,
  what: string,
  newest: (signal: AbortSignal) => Promise<FoundBuild>,
): UpdateProvider {
  return stagedProvider(ctx, {
    type,
    what,
    newest: async (signal) => {
      const { revision, locate } = await newest(signal);
      const stage = async () => {
        const at = await locate();
        const fields = { revision, ...at.fields, url: describeUrl(at.url) };
        const make = async () => {
          if (at.refused) throw new UpdateError(at.refused);
          ctx.log.info(`fetching ${what}`, fields);
          return prepareFromUrl(ctx, { ...at, signal });
        };
        // One staged folder per archive.
        return { id: JSON.stringify([revision, at.url, at.sha256]), make, fields };
      };
      return { revision, stage };
    },
  });
}
