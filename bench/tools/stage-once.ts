/**
 * Extracts one archive into `<instanceDir>/.update/staging-*` with the daemon's extractor and flushes it the way
 * an install does before its swap, printing `staged <ms> extract <ms> flush <ms>`. The flush is `tree`
 * (src/updates/install/flush.ts flushTree: one syncfs, what the install uses) or `files` (flushFiles: every file
 * and folder fsynced, the fallback and what the install did before), for an A/B on the same machine; run `sync`
 * between runs so neither pays for the other's writeback. The staged tree is removed before exit.
 * Usage: node --import tsx bench/tools/stage-once.ts <archive> <instanceDir> [tree|files]
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { extractArchive } from '../../src/updates/archive/extract.ts';
import { flushFiles, flushTree } from '../../src/updates/install/flush.ts';

const [archive, instanceDir, mode = 'tree'] = process.argv.slice(2);
if (!archive || !instanceDir || (mode !== 'tree' && mode !== 'files')) {
  console.error('usage: stage-once.ts <archive> <instanceDir> [tree|files]');
  process.exit(2);
}
const signal = new AbortController().signal;
const staging = join(instanceDir, '.update', `staging-${mode}`);
await mkdir(staging, { recursive: true });
const t0 = performance.now();
await extractArchive(archive, staging, signal);
const extracted = performance.now();
await (mode === 'tree' ? flushTree : flushFiles)(staging, signal);
const t1 = performance.now();
console.log(
  `staged ${(t1 - t0).toFixed(1)} extract ${(extracted - t0).toFixed(1)} flush ${(t1 - extracted).toFixed(1)}`,
);
await rm(staging, { recursive: true, force: true });
