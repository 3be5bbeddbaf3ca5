import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { PublishedBuild } from './cdn.ts';

/**
 * Server builds for the Manifest instances: `Robust.Server` (a sh launcher that execs this Node on the soak
 * server beside it) and `build.txt`, packed as tar.gz with GNU tar. Their content fingerprints are what `bin/`
 * may hold at any moment: one of them whole, never a mix or a part.
 */
export function fingerprint(dir: string): string | null {
  const hash = createHash('sha256');
  const files: string[] = [];
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, e.name);
      if (e.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  try {
    walk(dir);
    files.sort();
    for (const f of files) hash.update(relative(dir, f)).update('\0').update(readFileSync(f)).update('\0');
  } catch {
    return null;
  }
  return files.length === 0 ? null : hash.digest('hex');
}

export interface Build extends PublishedBuild {
  fingerprint: string;
}

export function makeBuild(workDir: string, label: string, index: number, serverSource: string): Build {
  const tree = join(workDir, 'builds', label);
  mkdirSync(tree, { recursive: true });
  const launcher = `#!/bin/sh\nexec "${process.execPath}" "$(dirname "$0")/server.mjs" "$@"\n`;
  writeFileSync(join(tree, 'Robust.Server'), launcher, { mode: 0o755 });
  copyFileSync(serverSource, join(tree, 'server.mjs'));
  writeFileSync(join(tree, 'build.txt'), `${label}\n`);
  const name = `SS14.Server_linux-x64-${label}.tar.gz`;
  const file = join(workDir, 'builds', name);
  execFileSync('tar', ['czf', file, '-C', tree, '.']);
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  // Later builds are newer: the manifest's newest wins.
  const time = new Date(Date.UTC(2025, 0, 1) + index * 3_600_000).toISOString();
  const print = fingerprint(tree);
  if (print === null) throw new Error(`build ${label} is empty`);
  return { key: `build-${label}`, time, file, name, sha256, fingerprint: print };
}
