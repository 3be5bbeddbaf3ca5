import { chmod, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { BENCH } from './env.ts';

/**
 * Copies a self-contained bench server (bench/servers/<name>) into `dir` with this very node as its shebang, and
 * makes it executable. The daemon runs `RunCommand` as a program, so a `#!/usr/bin/env node` script would cost it
 * an extra exec of env that the floor (spawn(node, [script])) does not pay; an absolute shebang makes the kernel
 * exec node directly, which keeps the comparison about the supervisors.
 */
export async function installServer(name: string, dir: string): Promise<string> {
  const source = await readFile(join(BENCH, 'servers', name), 'utf8');
  const body = source.startsWith('#!') ? source.slice(source.indexOf('\n') + 1) : source;
  const path = join(dir, basename(name));
  await writeFile(path, `#!${process.execPath}\n${body}`);
  await chmod(path, 0o755);
  return path;
}
