/** Archives cut short, as a download that stopped midway leaves them (not a test file). */
import { randomBytes } from 'node:crypto';
import { stat, truncate } from 'node:fs/promises';
import { writeRawTar } from '../../../fixtures/archives/build.ts';

/** Cuts the file at `path` to half its size. */
export async function cutInHalf(path: string): Promise<void> {
  await truncate(path, Math.floor((await stat(path)).size / 2));
}

/**
 * Writes a tar.gz at `path` holding one file of `bytes` random bytes (as hex, so twice as long), cut halfway
 * through that file: the reader runs out of input in the middle of an entry.
 */
export async function tarGzCutInEntry(path: string, bytes: number): Promise<void> {
  await writeRawTar(path, [{ path: 'big.bin', type: 'File', content: randomBytes(bytes).toString('hex') }], {
    gzip: true,
  });
  await cutInHalf(path);
}
