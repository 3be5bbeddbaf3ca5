import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../_support/env.ts';

/**
 * Node keeps a failed `import()` for good, so a module first loaded while descriptors are out breaks its feature
 * until the daemon restarts (test/e2e/resilience/descriptors.test.ts shows it on the real daemon). The daemon loads
 * every such module at start (src/daemon/preload.ts): one added elsewhere and not listed there would bring the
 * failure back, which this finds.
 */
const SRC = join(ROOT, 'src');
const PRELOAD = join(SRC, 'daemon/preload.ts');
const DYNAMIC = /\bimport\(\s*'([^']+)'\s*\)/g;

/** Imports left to first use, and why that is safe enough. */
const LEFT_LAZY: Record<string, string> = {
  'agones/wrapper.ts': 'loaded while the daemon starts, when Agones is on',
  'sql.js': 'loaded while the daemon starts (or a reload adds an instance) to import a data.db, and by the CLI',
  '@viz-js/viz':
    "Graphviz in WebAssembly (1.2 MB of code, more once running) for the dashboard's chart drawing only: a failed load costs that drawing, not control",
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** What `import('spec')` in `file` names: a path under src/ for a relative one, else the package name. */
const target = (file: string, spec: string) =>
  spec.startsWith('.') ? relative(SRC, resolve(dirname(file), spec)) : spec;

function dynamicImports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(DYNAMIC)]
    .map((m) => m[1] ?? '')
    .filter((spec) => !spec.startsWith('node:'))
    .map((spec) => target(file, spec));
}

test('preload :: every module src/ imports on first use is loaded at daemon start', () => {
  const preloaded = new Set(dynamicImports(PRELOAD));
  assert.ok(preloaded.size >= 10, `preload.ts lists the lazy modules (${preloaded.size})`);
  const missing = files(SRC)
    .filter((f) => f !== PRELOAD && !f.includes(`${join(SRC, 'cli')}/`) && !f.includes(`${join(SRC, 'kit')}/`))
    .flatMap((f) => dynamicImports(f).map((t) => ({ file: relative(ROOT, f), t })))
    .filter(({ t }) => !preloaded.has(t) && !(t in LEFT_LAZY))
    .map(({ file, t }) => `${file}: import('${t}')`);
  assert.equal(missing, [], 'add these to src/daemon/preload.ts');
});

test.run();
