import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { extractArchive } from '../../../src/updates/archive/extract.ts';
import { tempSuite } from '../../_support/env.ts';
import { writeRawTar } from '../../fixtures/archives/build.ts';
import { rejects } from '../_support/instance-suite.ts';
import { tarGzCutInEntry } from './_support/cut-archives.ts';

/*
 * Tar entries streamed off the parser into their files (src/updates/archive/tar.ts): entries split across
 * inflate chunks, and an archive cut inside one.
 */

const tar = tempSuite('tar reading', {
  ctx: { dest: '' },
  before: async (ctx) => {
    ctx.dest = join(ctx.dir, 'dest');
    await mkdir(ctx.dest);
  },
});

tar('tar read :: small entries that straddle inflate chunks come out byte for byte, with their modes', async (ctx) => {
  // 100 KB each: several of them span the 256 KB pieces gunzip hands over, so an entry arrives in two.
  const contents = Array.from({ length: 8 }, () => randomBytes(50_000).toString('hex'));
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeRawTar(
    archive,
    contents.map((content, i) => ({ path: `d/f${i}`, type: 'File', mode: i === 0 ? 0o755 : 0o644, content })),
    { gzip: true },
  );
  await extractArchive(archive, ctx.dest);
  for (const [i, content] of contents.entries()) {
    assert.ok((await readFile(join(ctx.dest, `d/f${i}`), 'utf8')) === content, `f${i} intact`);
  }
  assert.is((await stat(join(ctx.dest, 'd/f0'))).mode & 0o777, 0o755);
  assert.is((await stat(join(ctx.dest, 'd/f1'))).mode & 0o777, 0o644);
});

tar('tar read :: a tar.gz cut inside a small entry fails instead of waiting forever', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await tarGzCutInEntry(archive, 100_000);
  await rejects(extractArchive(archive, ctx.dest), /tar archive is corrupt .*unexpected end of file/);
});

tar.run();
