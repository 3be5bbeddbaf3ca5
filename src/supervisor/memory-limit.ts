import { formatBytes } from '../store/disk-space.ts';

/**
 * Why a server's memory calls for a restart (`memory 2.1 GB over MemoryLimitMB 2048`), or null while it is within
 * `limitMB` (or no limit is set). Megabytes are MiB, as the config key's users read `free -m` and `ps`.
 */
export function memoryOverLimit(rssBytes: number, limitMB: number | undefined): string | null {
  if (limitMB === undefined || rssBytes <= limitMB * 1024 * 1024) return null;
  return `memory ${formatBytes(rssBytes)} over MemoryLimitMB ${limitMB}`;
}
