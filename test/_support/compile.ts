/**
 * The runner's JavaScript copy of src/, machines/, test/ and bench/ (node_modules/.cache/watchdog-tests/js/): each
 * TypeScript file transpiled by esbuild, as tsx does on the fly, with its relative `.ts` imports renamed `.js`;
 * every other file (fixtures, assets, declarations) a symbolic link to the original. Each test file then starts
 * as plain `node`: tsx's loader costs every process about 0.4 s of CPU, and with several hundred files that was
 * a tenth of the suite. Only files changed since the last copy are transpiled again; a file removed from the
 * sources is removed from the copy. Outside the runner (`node --import tsx test/x.test.ts`) nothing changes.
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
import { transform } from 'esbuild';
import { ROOT } from './env.ts';

export const COMPILED = join(ROOT, 'node_modules/.cache/watchdog-tests/js');
const TREES = ['src', 'machines', 'test', 'bench'];

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
  if (existsSync(COMPILED)) {
    for (const file of walk(COMPILED)) if (!wanted.has(file)) rmSync(file);
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
  return stale.length;
}
