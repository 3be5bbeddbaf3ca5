// Which build the bins run: dist/ (JavaScript, no loader) or src/ through tsx. Decided per launch because the
// same bin/ serves a checkout (src/, maybe a stale dist/) and the package and the image (dist/ only).
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// A process's first fetch compiles undici's WebAssembly HTTP parser, and V8's optimizing tier for it costs about
// 0.3 s of CPU that a CLI call or a demo server never earns back (a `watchdog status` took 0.65 CPU-s, now 0.35).
// The baseline tier parses a loopback answer as fast. Set before any WebAssembly is compiled, so it takes effect.
setFlagsFromString('--liftoff-only');
// The young generation starts at 1 MB and V8 doubles it under allocation, to 16 MB a semi-space, which it keeps:
// a daemon that mostly waits idles 4 MB lower (bench/footprint.ts) with it held at its first size, for a few more
// short collections under load.
setFlagsFromString('--semi-space-growth-factor=1');

/** The bundles deploy/build.mjs writes to dist/app/, by the module they start from. */
const BUNDLES = { 'cli/main': 'watchdog', 'demo/main': 'demo-server' };

/**
 * The URL to import for `module` (e.g. `cli/main`), from the bin at `binUrl`. dist/ (the bundle of that module)
 * when WATCHDOG_RUNTIME=dist, or when there is no src/ (the packed tarball); otherwise src/, after registering
 * tsx, which a checkout has as a dev dependency and the package does not depend on.
 */
export async function pickRuntime(binUrl, module) {
  const compiled = new URL(`../dist/app/${BUNDLES[module]}.js`, binUrl);
  const source = new URL(`../src/${module}.ts`, binUrl);
  const wanted = process.env.WATCHDOG_RUNTIME;
  if (wanted === 'dist' || (wanted !== 'src' && !existsSync(source))) {
    if (!existsSync(compiled)) {
      throw new Error(`${compiled.pathname} is missing: run \`npm run build\` first`);
    }
    return compiled.href;
  }
  const { register } = await import('tsx/esm/api');
  register();
  return source.href;
}
