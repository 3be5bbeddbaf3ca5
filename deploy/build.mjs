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

// Files the daemon reads at run time beside its modules (grep `import.meta.url` in src/): tsc copies none.
cpSync(join(root, 'src/http/dashboard/assets'), join(dist, 'src/http/dashboard/assets'), { recursive: true });

// src/daemon/version.ts reads `../../package.json` from its own folder: from dist/src/daemon that is
// dist/package.json. It also marks dist/ as ES modules, which a package.json without "type" would not.
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
mkdirSync(dist, { recursive: true });
writeFileSync(join(dist, 'package.json'), `${JSON.stringify({ private: true, type: 'module', version }, null, 2)}\n`);
console.log(`build: dist/ written (version ${version})`);
