/**
 * Extracts one archive with the daemon's own extractor (src/updates/archive/extract.ts) into an existing folder and prints
 * `extracted <ms> from <ms> to <ms>` (its duration, and its start and end in ms since the process began, so a CPU
 * profile can be cut to the extraction), timing only the extraction (not module loading). The update benchmark runs it, once plain and
 * once under `node --cpu-prof`, to tell the extractor's cost apart from the rest of the install.
 * Usage: node --import tsx bench/tools/extract-once.ts <archive> <dest>
 */
import { extractArchive } from '../../src/updates/archive/extract.ts';

const [archive, dest] = process.argv.slice(2);
if (!archive || !dest) {
  console.error('usage: extract-once.ts <archive> <dest>');
  process.exit(2);
}
const t0 = performance.now();
await extractArchive(archive, dest);
const t1 = performance.now();
console.log(`extracted ${(t1 - t0).toFixed(1)} from ${t0.toFixed(1)} to ${t1.toFixed(1)}`);
