/**
 * Downloads one server archive with the daemon's own pipeline (fetchArchiveOffThread: in a worker thread, hashed as
 * it arrives, a tar.gz unpacked as it arrives, a zip saved and then unpacked) into an existing folder, and prints
 * `fetched <ms> from <ms> to <ms> extracted-while-downloading <bool>`, timing only that (not module loading), so the
 * install path can be profiled apart from the daemon (`node --cpu-prof` writes one profile per thread).
 * Usage: node --import tsx bench/tools/fetch-once.ts <url> <sha256> <dest>
 */
import { join } from 'node:path';
import { fetchArchiveOffThread } from '../../src/updates/fetch/off-thread.ts';
import { DEFAULT_LIMITS } from '../../src/updates/install/disk-guard.ts';

const [url, sha256, dest] = process.argv.slice(2);
if (!url || !sha256 || !dest) {
  console.error('usage: fetch-once.ts <url> <sha256> <dest>');
  process.exit(2);
}
const archive = join(dest, '..', 'download.part');
let extracted = false;
const t0 = performance.now();
await fetchArchiveOffThread(
  { download: { url, sha256, timeoutMs: 300_000 }, archive, staging: dest, limits: DEFAULT_LIMITS },
  new AbortController().signal,
  {
    onProgress: () => {},
    onDownloaded: (_bytes, whileDownloading) => {
      extracted = whileDownloading;
    },
  },
);
const t1 = performance.now();
console.log(
  `fetched ${(t1 - t0).toFixed(1)} from ${t0.toFixed(1)} to ${t1.toFixed(1)} extracted-while-downloading ${extracted}`,
);
