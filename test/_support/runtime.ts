// Every bin a test spawns (the daemon, the CLI, the demo server) runs the compiled build of the sources under test,
// built once by the test runner (test/_support/run.ts) before any file starts (deploy/build.mjs, about 3 s), instead
// of going through tsx, which costs each of the several hundred processes a test run starts over a second of CPU.
// That build is also what the package and the image run. Unit tests still import src/ through tsx, and a suite
// that means to cover the checkout's own path says WATCHDOG_RUNTIME=src (test/e2e/lifecycle.test.ts).
// `WATCHDOG_RUNTIME=src npm test` runs everything through tsx and builds nothing until a suite asks (ensureDist).
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './env.ts';

/** Set by the runner once it has built dist/: the files then running use it, so none may rebuild it under them. */
let built = process.env.WATCHDOG_DIST_BUILT === '1';

const BUILD = [join(ROOT, 'deploy/build.mjs')];
const failed = (code: number | null) => new Error(`the build failed (node deploy/build.mjs exited ${code})`);

/** dist/ built from the sources under test, once per test run (test/dist/ packs it too). */
export function ensureDist(): void {
  if (built) return;
  const build = spawnSync(process.execPath, BUILD, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw failed(build.status);
  built = true;
}

/** ensureDist for the runner, which meanwhile copies the test files. */
export function buildDist(): Promise<void> {
  return new Promise((done, fail) => {
    const build = spawn(process.execPath, BUILD, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    build.once('error', fail);
    build.once('close', (code) => {
      if (code !== 0) return fail(failed(code));
      built = true;
      done();
    });
  });
}
