import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './env.ts';

const run = promisify(execFile);

/**
 * `npm run build` (deploy/build.mjs), so the compiled daemon measured is the one of the sources being benchmarked,
 * never a stale dist/. Returns how long it took, for the notes.
 */
export async function buildDist(): Promise<number> {
  const t0 = performance.now();
  await run(process.execPath, [join(ROOT, 'deploy/build.mjs')], { cwd: ROOT, maxBuffer: 16 << 20 });
  return performance.now() - t0;
}
