import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { installArchive } from '../../../src/updates/archive/extract.ts';
import { hasPreviousBuild, rollbackBin } from '../../../src/updates/install/install.ts';
import { sampleBuild, writeZip } from '../../fixtures/archives/build.ts';
import { exists, instanceSuite, never, read, rejects } from '../_support/instance-suite.ts';

/**
 * Found by the soak (bench/soak, seed 20261125): an instance's first build, installed over the empty bin/ every
 * instance folder gets, kept that empty folder as bin.prev; a rollback was then accepted and swapped nothing into
 * bin/, leaving the instance with no program to launch (stopped.failing until the next update).
 */
const test = instanceSuite('install :: an empty bin/ is no build', { instance: 'empty' });

/** The instance folder as the daemon prepares it: an empty bin/ and no bin.prev. */
async function emptyBin(inst: string): Promise<void> {
  await rm(join(inst, 'bin'), { recursive: true, force: true });
  await mkdir(join(inst, 'bin'), { recursive: true });
}

test('empty-bin :: the first build over an empty bin/ leaves no bin.prev, so there is nothing to roll back to', async (ctx) => {
  await emptyBin(ctx.inst);
  const archive = join(ctx.dir, 'A.zip');
  await writeZip(archive, sampleBuild('A'));
  await installArchive({ archive, instanceDir: ctx.inst, signal: never() });
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A');
  assert.not.ok(await exists(join(ctx.inst, 'bin.prev')), 'an empty folder is not kept as the previous build');
  assert.not.ok(hasPreviousBuild(ctx.inst));
  await rejects(rollbackBin(ctx.inst), /no previous build/);
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A', 'bin/ untouched');
});

test('empty-bin :: an empty bin.prev (left by an older version) is no previous build: rollback refused, bin/ untouched', async (ctx) => {
  await emptyBin(ctx.inst);
  const archive = join(ctx.dir, 'A.zip');
  await writeZip(archive, sampleBuild('A'));
  await installArchive({ archive, instanceDir: ctx.inst, signal: never() });
  await mkdir(join(ctx.inst, 'bin.prev'));
  assert.not.ok(hasPreviousBuild(ctx.inst));
  await rejects(rollbackBin(ctx.inst), /no previous build/);
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A');
});

test('empty-bin :: an empty bin/ does not displace a real bin.prev: the new build goes in, the previous one stays', async (ctx) => {
  await emptyBin(ctx.inst);
  await mkdir(join(ctx.inst, 'bin.prev'));
  await writeFile(join(ctx.inst, 'bin.prev', 'build.txt'), 'old');
  const b = join(ctx.dir, 'B.zip');
  await writeZip(b, sampleBuild('B'));
  await installArchive({ archive: b, instanceDir: ctx.inst, signal: never() });
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'B');
  assert.is(await read(join(ctx.inst, 'bin.prev', 'build.txt')), 'old', 'the real previous build is kept');
  await rollbackBin(ctx.inst);
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'old');
});

test.run();
