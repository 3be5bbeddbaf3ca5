// Every bin a test spawns (the daemon, the CLI, the demo server) runs the compiled build of the sources under test,
// built once by the test runner (test/_support/run.ts) before any file starts (deploy/build.mjs, about 6 s), instead
// of going through tsx, which costs each of the several hundred processes a test run starts over a second of CPU.
// That build is also what the package and the image run. Unit tests still import src/ through tsx, and a suite
// that means to cover the checkout's own path says WATCHDOG_RUNTIME=src (test/e2e/lifecycle.test.ts).
// `WATCHDOG_RUNTIME=src npm test` runs everything through tsx and builds nothing until a suite asks (ensureDist).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './env.ts';

/** Set by the runner once it has built dist/: the files then running use it, so none may rebuild it under them. */
let built = process.env.WATCHDOG_DIST_BUILT === '1';

/**
 * dist/ built from the sources under test, once per test run (test/dist/ packs it too). Asynchronous, so the
 * runner copies the test files meanwhile: tsc, most of the build, keeps one core busy.
 */
export function ensureDist(): Promise<void> {
  if (built) return Promise.resolve();
  return new Promise((done, fail) => {
    const build = spawn(process.execPath, [join(ROOT, 'deploy/build.mjs')], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    build.once('error', fail);
    build.once('close', (code) => {
      if (code !== 0) return fail(new Error(`the build failed (node deploy/build.mjs exited ${code})`));
      built = true;
      done();
    });
  });
}
