/**
 * The runner's JavaScript copy of src/, machines/, test/ and bench/ (node_modules/.cache/watchdog-tests/js/): each
 * TypeScript file transpiled by esbuild, as tsx does on the fly, with its relative `.ts` imports renamed `.js`;
 * every other file (fixtures, assets, declarations) a symbolic link to the original. Each test file then starts
 * as plain `node`: tsx's loader costs every process about 0.4 s of CPU, and with several hundred files that was
 * a tenth of the suite. Only files changed since the last copy are transpiled again; a file removed from the
 * sources is removed from the copy. Outside the runner (`node --import tsx test/x.test.ts`) nothing changes.
 *
 * The test files themselves (and batch.ts) are then bundled over their copies, sharing chunks in `_chunks/`: a
 * file's process loads a few chunks instead of a few hundred modules, a fifth of a second less each. Every other
 * file keeps its one-to-one copy, for what a test spawns or a worker loads by path. `import.meta.url` in a bundled
 * module is written as its one-to-one copy's URL, so paths found from it (assets, fixtures) are the same. The
 * packages in BUNDLED go into the chunks too; the others are loaded from node_modules.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';
import { ROOT } from './env.ts';

export const COMPILED = join(ROOT, 'node_modules/.cache/watchdog-tests/js');
const TREES = ['src', 'machines', 'test', 'bench'];
const CHUNKS = join(COMPILED, '_chunks');

/** `./x.ts` and `../y/z.ts` in static and dynamic imports and re-exports become `.js`; packages are left alone. */
const RELATIVE_TS = /((?:\bfrom|\bimport)\s*\(?\s*)(['"])(\.{1,2}\/[^'"\n]+)\.ts\2/g;
export const renameImports = (code: string) => code.replace(RELATIVE_TS, '$1$2$3.js$2');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? walk(path) : [path];
  });
}

const isTs = (file: string) => file.endsWith('.ts') && !file.endsWith('.d.ts');
const target = (file: string) =>
  join(COMPILED, isTs(file) ? `${relative(ROOT, file).slice(0, -3)}.js` : relative(ROOT, file));

/** Brings the copy up to date with the sources; returns how many files were transpiled. */
export async function compileTests(): Promise<number> {
  const sources = TREES.flatMap((t) => walk(join(ROOT, t)));
  const wanted = new Set(sources.map(target));
  // The copy's own package.json (a link to ours) makes its .js files ES modules.
  wanted.add(join(COMPILED, 'package.json'));
  let removed = 0;
  if (existsSync(COMPILED)) {
    for (const file of walk(COMPILED)) {
      if (wanted.has(file) || file.startsWith(`${CHUNKS}/`)) continue;
      rmSync(file);
      removed++;
    }
  }
  const link = (to: string, at: string) => {
    if (lstatSync(at, { throwIfNoEntry: false })) return;
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(to, at);
  };
  link(join(ROOT, 'package.json'), join(COMPILED, 'package.json'));
  const stale = sources.filter((file) => {
    const out = target(file);
    if (!isTs(file)) {
      link(file, out);
      return false;
    }
    return !existsSync(out) || statSync(out).mtimeMs < statSync(file).mtimeMs;
  });
  await Promise.all(
    stale.map(async (file) => {
      const { code } = await transform(readFileSync(file, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcemap: 'inline',
        sourcefile: file,
        tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
      });
      const out = target(file);
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, renameImports(code));
    }),
  );
  const entries = sources.filter((f) => f.endsWith('.test.ts') || f === join(ROOT, 'test/_support/batch.ts'));
  if (stale.length > 0 || removed > 0 || !existsSync(CHUNKS)) await bundle(entries);
  return stale.length;
}

/**
 * Packages bundled into the chunks rather than loaded from node_modules by each file's process: loading `yaml`'s
 * 80 CommonJS files costs a process 60 ms of CPU, its bundled copy 15. Pure JavaScript all, read by no path of
 * their own; the rest (uvu, whose state batch.ts shares, browsers, servers started for tests) stay external.
 */
const BUNDLED = new Set([
  'yaml',
  'xstate',
  'hono',
  '@hono/node-server',
  'valibot',
  'prom-client',
  'tar',
  'ofetch',
  'yazl',
  'yauzl',
  'mitt',
  'croner',
]);

/** The test files bundled over their one-to-one copies (see the top of this file). */
async function bundle(entries: string[]): Promise<void> {
  rmSync(CHUNKS, { recursive: true, force: true });
  await build({
    entryPoints: entries,
    outbase: ROOT,
    outdir: COMPILED,
    chunkNames: '_chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'warning',
    // A CommonJS package bundled in asks for Node's built-in modules with require().
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    plugins: [
      {
        name: 'external-packages',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, ({ path }) => {
            const name = path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0];
            return name !== undefined && BUNDLED.has(name) ? undefined : { path, external: true };
          });
        },
      },
      {
        name: 'one-to-one-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /\.(ts|mjs|js)$/ }, ({ path }) => ({
            loader: isTs(path) ? 'ts' : 'js',
            contents: readFileSync(path, 'utf8').replaceAll(
              'import.meta.url',
              JSON.stringify(pathToFileURL(target(path)).href),
            ),
          }));
        },
      },
    ],
  });
}
