#!/usr/bin/env node
// `npm run build`: dist/ for the package and the container image, so neither needs TypeScript or tsx at run
// time. Plain JavaScript on purpose: it runs where only node and the dev dependencies are.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// typescript's exports hide bin/tsc; its package.json is exported, and bin/tsc sits beside it.
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');

function compile(project) {
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, project)], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`build: tsc -p ${project} failed`);
    process.exit(1);
  }
}

// A clean folder each time: a module removed from src/ must not live on in the package.
rmSync(dist, { recursive: true, force: true });
compile('tsconfig.build.json');
compile('tsconfig.build-types.json');

// Files the daemon reads at run time beside its modules (grep `import.meta.url` in src/), and which
// page.ts imports as a module (assets/card-view.js): tsc copies none, and the bundle below needs them in place.
// src/http/dashboard/routes.ts serves `./assets/` beside itself: beside the bundle's chunks too.
for (const at of ['src/http/dashboard/assets', 'app/assets']) {
  cpSync(join(root, 'src/http/dashboard/assets'), join(dist, at), { recursive: true });
}

// The programs (the daemon with its CLI, the demo server) bundled from the compiled modules into dist/app/: a few
// files instead of ~350 modules, which starts faster and idles on less memory (bench/footprint.ts). Dependencies
// are bundled too, except the two loaded lazily with WebAssembly beside them (sql.js, @viz-js/viz). Whitespace and
// syntax minified, names kept, so stack traces still name functions. dist/src/ stays for the kit's importers.
const { build } = await import('esbuild');

// prom-client's index loads all of it as it starts: the Pushgateway client, the cluster aggregator, the default
// process metrics with @opentelemetry/api, Histogram and Summary (tdigest). The daemon uses Registry, Counter and
// Gauge (src/metrics/); the bundle takes those three from prom-client's own modules, which spares an idle daemon
// 0.75 MB (bench/footprint.ts). An import of anything else fails the build ("No matching export"): add it here.
const promClientCore = {
  name: 'prom-client-core',
  setup(b) {
    b.onResolve({ filter: /^prom-client$/ }, () => ({ path: 'prom-client', namespace: 'prom-client-core' }));
    b.onLoad({ filter: /.*/, namespace: 'prom-client-core' }, () => ({
      resolveDir: root,
      contents: [
        "export { default as Registry } from 'prom-client/lib/registry.js';",
        "export { default as Counter } from 'prom-client/lib/counter.js';",
        "export { default as Gauge } from 'prom-client/lib/gauge.js';",
      ].join('\n'),
    }));
  },
};

await build({
  entryPoints: {
    watchdog: join(dist, 'src/cli/main.js'),
    'demo-server': join(dist, 'src/demo/main.js'),
    'archive-worker': join(dist, 'src/updates/fetch/archive-worker.js'),
  },
  outdir: join(dist, 'app'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  external: ['sql.js', '@viz-js/viz'],
  plugins: [promClientCore],
  // Bundled CommonJS dependencies call require(); ES modules have none of their own.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
});

// src/daemon/version.ts reads `../../package.json` from its own folder. From dist/app/ that is the package's own;
// from dist/src/daemon/ it is dist/package.json, written here, which also marks dist/ as ES modules.
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(dist, { recursive: true });
writeFileSync(join(dist, 'package.json'), `${JSON.stringify({ private: true, type: 'module', version }, null, 2)}\n`);
console.log(`build: dist/ written (version ${version})`);
