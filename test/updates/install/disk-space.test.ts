/**
 * The install pipeline on a real small file system (tmpfs): a build larger than the free space is refused before
 * anything is written, a disk filling up mid-extraction reads as "disk full" (not as a corrupt archive), and an
 * archive cannot unpack beyond its cap; staging is removed and bin/ untouched every time.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import * as assert from 'uvu/assert';
import { archiveSink } from '../../../src/updates/archive/sink.ts';
import { DiskSpaceError, type SpaceLimits } from '../../../src/updates/install/disk-guard.ts';
import { type SmallFs, smallDiskSuite } from '../../_support/tmpfs.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { never, oldBuildInBin, rejects, stageArchive } from '../_support/instance-suite.ts';

const MB = 1_000_000;
const { s, test } = smallDiskSuite<{ inst: string }>('install on a small disk', 8 * MB, async (ctx) => {
  ctx.inst = join(ctx.fs.path, 'instances', 'alpha');
  await mkdir(join(ctx.inst, 'bin'), { recursive: true });
  await writeFile(join(ctx.inst, 'bin', 'marker'), 'old build');
});

/** After a refused install: no staging folder left in the instance's scratch folder, and bin/ as it was. */
async function leftAsItWas(inst: string): Promise<void> {
  const left = await readdir(join(inst, '.update')).catch(() => [] as string[]);
  assert.equal(
    left.filter((n) => n.startsWith('staging')),
    [],
    'staging removed',
  );
  await oldBuildInBin(inst);
}

const limits = (marginMb: number, ceilingMb: number): SpaceLimits => ({
  marginBytes: marginMb * MB,
  ceilingBytes: ceilingMb * MB,
});

/** Staging `archive` into `inst` is refused with a DiskSpaceError of `reason` whose message matches `message`. */
async function refusedStaging(
  archive: string,
  inst: string,
  space: SpaceLimits,
  message: RegExp,
  reason: DiskSpaceError['reason'],
): Promise<DiskSpaceError> {
  const err = await rejects(
    stageArchive({ archive, instanceDir: inst, signal: never(), limits: space }),
    message,
    DiskSpaceError,
  );
  assert.is((err as DiskSpaceError).reason, reason);
  return err as DiskSpaceError;
}

test('space :: a build declaring more than the free space is refused before anything is written', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  // 6 MB of one byte: small as a zip, large unpacked.
  const archive = join(ctx.work, 'big.zip');
  await writeZip(archive, [...sampleBuild('B'), { name: 'big.bin', content: Buffer.alloc(6 * MB, 1) }]);
  fs.fill(3 * MB);
  const before = fs.free();
  const err = await refusedStaging(
    archive,
    ctx.inst,
    limits(1, 100),
    /^not enough disk space on \/.+: needs 7(\.\d)? MB, has [23](\.\d)? MB/,
    'short',
  );
  assert.match(err.message, fs.path);
  assert.ok(fs.free() >= before - 64 * 1024, 'nothing was written');
  await leftAsItWas(ctx.inst);
});

test('space :: a disk filling up mid-extraction is "disk full", not a corrupt archive', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const archive = join(ctx.work, 'many.zip');
  // 400 files of 3 kB declare 1.2 MB but take a 4 KiB page each on tmpfs (1.6 MB): the declared size fits, the
  // files do not.
  const files = Array.from({ length: 400 }, (_, i) => ({ name: `f/${i}.txt`, content: Buffer.alloc(3000, i) }));
  await writeZip(archive, [...sampleBuild('C'), ...files]);
  fs.fill(Math.round(1.35 * MB));
  const err = await refusedStaging(
    archive,
    ctx.inst,
    limits(0, 100),
    /^disk full on \/.+ while writing the update \(ENOSPC: no space left on device/,
    'full',
  );
  assert.not.match(err.message, /corrupt/);
  await leftAsItWas(ctx.inst);
});

test('cap :: a zip bomb is refused by its declared size before a byte is unpacked', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const archive = join(ctx.inst, 'bomb.zip');
  // 40 MB of zeros deflate to about 40 KB: it fits the small disk, its contents would not.
  await writeZip(archive, [...sampleBuild('D'), { name: 'zeros.bin', content: Buffer.alloc(40 * MB) }]);
  const size = (await readFile(archive)).length;
  assert.ok(size < 400_000, `the bomb is small (${size} bytes)`);
  const before = fs.free();
  await refusedStaging(
    archive,
    ctx.inst,
    limits(0, 5),
    /^the archive declares 40 MB unpacked, more than the 5 MB Updates\.MaxUnpackedMegabytes allows/,
    'cap',
  );
  assert.ok(fs.free() >= before - 64 * 1024, 'nothing was unpacked');
  await leftAsItWas(ctx.inst);
});

test('cap :: a tar.gz streamed as it downloads stops at the ceiling, counting bytes written', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const archive = join(ctx.work, 'stream.tar.gz');
  await writeTar(archive, [...sampleBuild('E'), { name: 'zeros.bin', content: Buffer.alloc(20 * MB) }], {
    gzip: true,
  });
  const data = await readFile(archive);
  const staged = join(ctx.inst, '.update', 'staging-test');
  await mkdir(staged, { recursive: true });
  const before = fs.free();
  const { sink } = archiveSink(join(ctx.inst, '.update', 'download.part'), staged, limits(0, 2));
  const err = await rejects(
    sink(Readable.from([data]), never(), data.length),
    /^the archive unpacks to more than its cap of 2 MB/,
    DiskSpaceError,
  );
  assert.is((err as DiskSpaceError).reason, 'cap');
  const used = before - fs.free();
  assert.ok(used <= 2 * MB + 256 * 1024, `stopped at the cap (${used} bytes used)`);
});

/** A zip's head followed by zeros, of no announced length: 100 MB in all, far past the 8 MB disk. */
function endlessZip(): Readable {
  const zero = Buffer.alloc(256 * 1024);
  return Readable.from(
    (async function* () {
      yield Buffer.concat([Buffer.from('PK\x03\x04'), zero.subarray(4)]);
      for (let i = 1; i < 400; i++) yield zero;
    })(),
  );
}

test('endless :: a download of unknown length stops at the free space less the margin', async (ctx) => {
  const fs = ctx.fs as SmallFs;
  const staged = join(ctx.inst, '.update', 'staging-test');
  await mkdir(staged, { recursive: true });
  const before = fs.free();
  const part = join(ctx.inst, '.update', 'download.part');
  const { sink } = archiveSink(part, staged, limits(2, 100));
  const err = await rejects(
    sink(endlessZip(), never(), null),
    /^the download of unknown length passed/,
    DiskSpaceError,
  );
  assert.is((err as DiskSpaceError).reason, 'cap');
  const written = (await stat(part)).size;
  assert.ok(written <= before - 2 * MB, `stopped before the margin (${written} of ${before} bytes free)`);
  assert.ok(fs.free() >= MB, 'the disk did not fill');
});

test('endless :: a download of unknown length stops at Updates.MaxUnpackedMegabytes', async (ctx) => {
  const staged = join(ctx.inst, '.update', 'staging-test');
  await mkdir(staged, { recursive: true });
  const part = join(ctx.inst, '.update', 'download.part');
  const { sink } = archiveSink(part, staged, limits(0, 1));
  await rejects(
    sink(endlessZip(), never(), null),
    /passed 1(\.0)? MB, the most Updates\.MaxUnpackedMegabytes/,
    DiskSpaceError,
  );
  assert.ok((await stat(part)).size <= MB, 'stopped at the ceiling');
});

s.run();
