/**
 * Downloads one server archive with the daemon's own pipeline (fetchVerified into archiveSink: hashed as it
 * arrives, a tar.gz unpacked as it arrives, a zip saved and then unpacked) into an existing folder, and prints
 * `fetched <ms> from <ms> to <ms> extracted-while-downloading <bool>`, timing only that (not module loading), so the
 * install path can be profiled apart from the daemon (`node --cpu-prof`).
 * Usage: node --import tsx bench/tools/fetch-once.ts <url> <sha256> <dest>
 */
import { join } from 'node:path';
import { extractArchive } from '../../src/updates/archive/extract.ts';
import { archiveSink } from '../../src/updates/archive/sink.ts';
import { fetchVerified } from '../../src/updates/fetch/download.ts';

const [url, sha256, dest] = process.argv.slice(2);
if (!url || !sha256 || !dest) {
  console.error('usage: fetch-once.ts <url> <sha256> <dest>');
  process.exit(2);
}
const archive = join(dest, '..', 'download.part');
const t0 = performance.now();
const into = archiveSink(archive, dest);
await fetchVerified({ url, sha256, timeoutMs: 300_000, signal: new AbortController().signal }, into.sink);
if (!into.extracted()) await extractArchive(archive, dest);
const t1 = performance.now();
console.log(
  `fetched ${(t1 - t0).toFixed(1)} from ${t0.toFixed(1)} to ${t1.toFixed(1)} extracted-while-downloading ${into.extracted()}`,
);
