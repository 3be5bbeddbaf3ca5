import { rm } from 'node:fs/promises';
import { extractArchive } from '../archive/extract.ts';
import { archiveSink } from '../archive/sink.ts';
import type { SpaceLimits } from '../install/disk-guard.ts';
import { fetchVerified } from './download.ts';

/** One build to fetch into a staging folder: what the update worker is given (off-thread.ts). */
export interface ArchiveJob {
  /** Absent when `archive` is already on disk (a git build's output): it is only extracted. */
  download?: { url: string; sha256?: string; headers?: Record<string, string>; timeoutMs: number };
  /** Where a zip (or anything not streamed) is saved before it is extracted; removed once it is. */
  archive: string;
  staging: string;
  limits: SpaceLimits;
}

export interface ArchiveEvents {
  onProgress(bytes: number, total: number | null): void;
  /** The whole body arrived and matched its hash; `extracted` when it was extracted as it arrived (a tar). */
  onDownloaded(bytes: number, extracted: boolean): void;
}

/**
 * Downloads a server archive, hashing it and, for a tar or tar.gz, extracting it into `job.staging` as it arrives;
 * a zip (or anything unrecognised) is saved to `job.archive`, then extracted. What the update worker runs: every
 * extraction the daemon makes runs there (off-thread.ts says why).
 */
export async function runArchiveJob(job: ArchiveJob, signal: AbortSignal, events: ArchiveEvents): Promise<void> {
  if (job.download) {
    const into = archiveSink(job.archive, job.staging, job.limits);
    const { bytes } = await fetchVerified({ ...job.download, signal, onProgress: events.onProgress }, into.sink);
    const extracted = into.extracted();
    events.onDownloaded(bytes, extracted);
    if (extracted) return;
  }
  await extractArchive(job.archive, job.staging, signal, job.limits);
  // Removed before the staged build is flushed: its pages, still unwritten, are then dropped, not written (the
  // flush syncs the whole file system, install/flush.ts).
  await rm(job.archive, { force: true });
}
