// Every bin a test spawns (the daemon, the CLI, the demo server) runs the compiled build of the sources under test,
// built once by the test runner (test/_support/run.ts) before any file starts (deploy/build.mjs, about 3 s), instead
// of going through tsx, which costs each of the several hundred processes a test run starts over a second of CPU.
// That build is also what the package and the image run. Unit tests still import src/ through tsx, and a suite
// that means to cover the checkout's own path says WATCHDOG_RUNTIME=src (test/e2e/lifecycle.test.ts).
// `WATCHDOG_RUNTIME=src npm test` runs everything through tsx and builds nothing until a suite asks (ensureDist).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './env.ts';

/** Set by the runner once it has built dist/: the files then running use it, so none may rebuild it under them. */
let built = process.env.WATCHDOG_DIST_BUILT === '1';

/** dist/ built from the sources under test, once per test run (test/dist/ packs it too). */
export function ensureDist(): void {
  if (built) return;
  const build = spawnSync(process.execPath, [join(ROOT, 'deploy/build.mjs')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error(`the build failed (node deploy/build.mjs exited ${build.status})`);
  built = true;
}
