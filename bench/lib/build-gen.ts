import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A fake server build of about `megabytes` MB: three quarters in three large files of random bytes (incompressible,
 * like packed game assets), the rest in 32 KB files of base64 text spread over 16 folders (compresses to about
 * three quarters, like DLLs and configs), plus `Robust.Server` and `build.txt`.
 */
export async function generateBuild(dir: string, megabytes: number): Promise<{ files: number; bytes: number }> {
  const MB = 1 << 20;
  const largeTotal = Math.round(megabytes * 0.75 * MB);
  let bytes = 0;
  let files = 0;
  await mkdir(join(dir, 'Resources'), { recursive: true });
  for (let i = 0; i < 3; i++) {
    const size = Math.floor(largeTotal / 3);
    const chunks: Buffer[] = [];
    for (let left = size; left > 0; left -= 8 * MB) chunks.push(randomBytes(Math.min(8 * MB, left)));
    await writeFile(join(dir, 'Resources', `pack${i}.bin`), Buffer.concat(chunks));
    bytes += size;
    files++;
  }
  const small = 32 * 1024;
  const count = Math.max(1, Math.round((megabytes * MB - largeTotal) / small));
  for (let i = 0; i < count; i++) {
    const folder = join(dir, 'lib', `m${i % 16}`);
    if (i < 16) await mkdir(folder, { recursive: true });
    await writeFile(join(folder, `part${i}.dll`), randomBytes((small * 3) / 4).toString('base64'));
    bytes += small;
    files++;
  }
  await writeFile(join(dir, 'Robust.Server'), '#!/bin/sh\necho bench build\n', { mode: 0o755 });
  await writeFile(join(dir, 'build.txt'), 'bench build\n');
  return { files: files + 2, bytes };
}

/** tar.gz (GNU tar + gzip, default level) of `srcDir`'s contents, as `<outDir>/<name>`. */
export async function packTarGz(srcDir: string, outDir: string, name = 'build.tar.gz'): Promise<string> {
  const tgz = join(outDir, name);
  await run('tar', ['-czf', tgz, '-C', srcDir, '.'], { maxBuffer: 1 << 20 });
  return tgz;
}

/** tar.gz (GNU tar + gzip, default level) and zip (Info-ZIP, default level) of `srcDir`'s contents. */
export async function packBuild(srcDir: string, outDir: string): Promise<{ tgz: string; zip: string }> {
  const zip = join(outDir, 'build.zip');
  const [tgz] = await Promise.all([
    packTarGz(srcDir, outDir),
    run('zip', ['-q', '-r', zip, '.'], { cwd: srcDir, maxBuffer: 1 << 20 }),
  ]);
  return { tgz, zip };
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

export async function fileSize(file: string): Promise<number> {
  return (await stat(file)).size;
}
