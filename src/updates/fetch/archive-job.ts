import { rm } from 'node:fs/promises';
import { extractArchive } from '../archive/extract.ts';
import { archiveSink } from '../archive/sink.ts';
import type { SpaceLimits } from '../install/disk-guard.ts';
import { fetchVerified } from './download.ts';

/** What the update worker is given; without `download`, `archive` is on disk already (a git build's output). */
export interface ArchiveJob {
  download?: { url: string; sha256?: string; headers?: Record<string, string>; timeoutMs: number };
  /** Where a zip (or anything not streamed) is saved before it is extracted; removed once it is. */
  archive: string;
  staging: string;
  limits: SpaceLimits;
}

export interface ArchiveEvents {
  onProgress(bytes: number, total: number | null): void;
  /** The body arrived whole and matched its hash; `extracted` when it was extracted as it arrived (a tar). */
  onDownloaded(bytes: number, extracted: boolean): void;
}

/** Downloads and extracts a server archive into `job.staging` (archive/sink.ts): what the update worker runs. */
export async function runArchiveJob(job: ArchiveJob, signal: AbortSignal, events: ArchiveEvents): Promise<void> {
  if (job.download) {
    const into = archiveSink(job.archive, job.staging, job.limits);
    const { bytes } = await fetchVerified({ ...job.download, signal, onProgress: events.onProgress }, into.sink);
    const extracted = into.extracted();
    events.onDownloaded(bytes, extracted);
    if (extracted) return;
  }
  await extractArchive(job.archive, job.staging, signal, job.limits);
  // Removed before the flush syncs the file system (install/flush.ts): its unwritten pages are dropped, not written.
  await rm(job.archive, { force: true });
}
