import { readdirSync } from 'node:fs';
import { mkdir, readdir, rmdir, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { installArchive } from '../../../src/updates/archive/extract.ts';
import {
  oldBuildsRemoved,
  recoverInterruptedInstall,
  removeDisplacedBuilds,
  rollbackBin,
} from '../../../src/updates/install/install.ts';
import { waitFor } from '../../_support/env.ts';
import { sampleBuild, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import {
  type InstanceCtx as Ctx,
  exists,
  instanceSuite,
  never,
  oldBuildInBin,
  read,
  rejects,
} from '../_support/instance-suite.ts';

/** bin/ still holds the pre-populated build and no staging folder is left behind. */
async function untouched(ctx: Ctx): Promise<void> {
  await oldBuildInBin(ctx.inst);
  const scratch = await readdir(join(ctx.inst, '.update')).catch(() => []);
  assert.equal(
    scratch.filter((n) => n.startsWith('staging')),
    [],
  );
}

// ---

const install = instanceSuite('installArchive');

install(
  'installArchive :: swaps the build in, keeps the old one as bin.prev, makes the program executable',
  async (ctx) => {
    const archive = join(ctx.dir, 'A.zip');
    await writeZip(archive, sampleBuild('A'));
    const phases: string[] = [];
    await installArchive({ archive, instanceDir: ctx.inst, signal: never(), onPhase: (p) => phases.push(p) });
    assert.equal(phases, ['extract', 'install']);
    assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A');
    assert.is((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o111, 0o111);
    assert.is(await read(join(ctx.inst, 'bin.prev', 'marker')), 'old build');
    assert.ok(await exists(archive), "the archive is the caller's to remove");

    const b = join(ctx.dir, 'B.tar.gz');
    await writeTar(b, sampleBuild('B'), { gzip: true });
    await installArchive({ archive: b, instanceDir: ctx.inst, signal: never() });
    assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'B');
    assert.is(await read(join(ctx.inst, 'bin.prev', 'build.txt')), 'A', 'the older bin.prev was replaced');
    await oldBuildsRemoved(ctx.inst);
    assert.equal(
      (await readdir(join(ctx.inst, '.update'))).filter((n) => !n.startsWith('.')),
      [],
    );
  },
);

/** The displaced builds waiting or being removed in the instance's scratch folder. */
const displacedBuilds = (inst: string) => readdirSync(join(inst, '.update')).filter((n) => n.startsWith('old-'));

install(
  'installArchive :: resolves with the new build in bin/ before the older build it displaces is removed (that waits until the new server checks in: bench/downtime.ts), and oldBuildsRemoved removes it at once',
  async (ctx) => {
    const a = join(ctx.dir, 'A.zip');
    await writeZip(a, sampleBuild('A'));
    await installArchive({ archive: a, instanceDir: ctx.inst, signal: never() });
    const b = join(ctx.dir, 'B.zip');
    await writeZip(b, sampleBuild('B'));
    await installArchive({ archive: b, instanceDir: ctx.inst, signal: never() });
    // Read synchronously, before this test yields to the event loop: the removal starts only after the install
    // resolved, and its first file operation cannot complete before the loop turns.
    const displaced = readdirSync(join(ctx.inst, '.update')).filter((n) => n.startsWith('old-'));
    assert.is(displaced.length, 1, 'the displaced build is still in .update/ when the install resolves');
    assert.equal(readdirSync(join(ctx.inst, '.update', displaced[0] as string)), ['marker'], 'it is the old build');
    assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'B');
    assert.is(await read(join(ctx.inst, 'bin.prev', 'build.txt')), 'A');
    // A removal started by the install would be under way by now: one of the same shape (a folder with one file,
    // removed one call at a time as install.ts does), started after it, has finished.
    const probe = join(ctx.dir, 'probe-build');
    await mkdir(probe);
    await writeFile(join(probe, 'marker'), 'x');
    for (const name of await readdir(probe)) await unlink(join(probe, name));
    await rmdir(probe);
    assert.equal(displacedBuilds(ctx.inst), displaced, 'it waits for the new server to check in');
    await oldBuildsRemoved(ctx.inst);
    assert.equal(
      (await readdir(join(ctx.inst, '.update'))).filter((n) => !n.startsWith('.')),
      [],
      'removed once oldBuildsRemoved resolves',
    );
  },
);

install(
  'installArchive :: one displaced build waits at a time; removeDisplacedBuilds starts its removal',
  async (ctx) => {
    for (const name of ['A', 'B']) {
      const archive = join(ctx.dir, `${name}.zip`);
      await writeZip(archive, sampleBuild(name));
      await installArchive({ archive, instanceDir: ctx.inst, signal: never() });
    }
    const first = displacedBuilds(ctx.inst);
    assert.is(first.length, 1, 'the original build waits');
    const c = join(ctx.dir, 'C.zip');
    await writeZip(c, sampleBuild('C'));
    await installArchive({ archive: c, instanceDir: ctx.inst, signal: never() });
    await waitFor('the older waiting build to go', () => !displacedBuilds(ctx.inst).includes(first[0] as string), 5000);
    const second = displacedBuilds(ctx.inst);
    assert.is(second.length, 1, 'build A, displaced by C, waits in its place');
    assert.is(await read(join(ctx.inst, '.update', second[0] as string, 'build.txt')), 'A');
    removeDisplacedBuilds(ctx.inst);
    await waitFor('A to go once the server is up', () => displacedBuilds(ctx.inst).length === 0, 5000);
    assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'C');
    assert.is(await read(join(ctx.inst, 'bin.prev', 'build.txt')), 'B');
  },
);

install(
  'installArchive :: the displaced build is removed folder by folder, links removed and never followed',
  async (ctx) => {
    const outside = join(ctx.dir, 'outside');
    await mkdir(join(outside, 'keep'), { recursive: true });
    await writeFile(join(outside, 'keep', 'file'), 'not part of any build');
    // The build that will be displaced: nested folders, and links to a folder and a file outside the instance.
    await mkdir(join(ctx.inst, 'bin.prev', 'Resources', 'deep', 'er'), { recursive: true });
    await writeFile(join(ctx.inst, 'bin.prev', 'Resources', 'deep', 'er', 'f.bin'), 'x'.repeat(10_000));
    await symlink(outside, join(ctx.inst, 'bin.prev', 'Resources', 'to-outside'));
    await symlink(join(outside, 'keep', 'file'), join(ctx.inst, 'bin.prev', 'file-link'));
    const archive = join(ctx.dir, 'A.zip');
    await writeZip(archive, sampleBuild('A'));
    await installArchive({ archive, instanceDir: ctx.inst, signal: never() });
    await oldBuildsRemoved(ctx.inst);
    assert.equal(
      (await readdir(join(ctx.inst, '.update'))).filter((n) => !n.startsWith('.')),
      [],
    );
    assert.is(await read(join(outside, 'keep', 'file')), 'not part of any build', 'what the links pointed at is kept');
    assert.is(await read(join(ctx.inst, 'bin.prev', 'marker')), 'old build');
  },
);

install('installArchive :: a RunCommand inside bin/ gets the execute bit; one outside is left alone', async (ctx) => {
  const archive = join(ctx.dir, 'A.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'sub/start.sh', content: '#!/bin/sh\n', mode: 0o640 }]);
  await installArchive({ archive, instanceDir: ctx.inst, runCommand: 'bin/sub/start.sh', signal: never() });
  assert.is((await stat(join(ctx.inst, 'bin', 'sub', 'start.sh'))).mode & 0o777, 0o751);
  assert.is((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o111, 0, 'only the RunCommand target');
  await installArchive({
    archive,
    instanceDir: ctx.inst,
    runCommand: join(ctx.inst, 'bin', 'Robust.Server'),
    signal: never(),
  });
  assert.is((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o111, 0o111, 'absolute RunCommand into bin/');
  await installArchive({ archive, instanceDir: ctx.inst, runCommand: 'currentServer', signal: never() });
  assert.is((await stat(join(ctx.inst, 'bin', 'Robust.Server'))).mode & 0o111, 0);
});

install('installArchive :: a corrupt archive leaves bin/ untouched', async (ctx) => {
  const archive = join(ctx.dir, 'bad.zip');
  await writeFile(archive, Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(200, 7)]));
  await rejects(installArchive({ archive, instanceDir: ctx.inst, signal: never() }), /corrupt/);
  await untouched(ctx);
  assert.not.ok(await exists(join(ctx.inst, 'bin.prev')));
});

install('installArchive :: an unsafe archive leaves bin/ untouched', async (ctx) => {
  const archive = join(ctx.dir, 'evil.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'xx/evil.txt', content: 'evil' }], {
    'xx/evil.txt': '../evil.txt',
  });
  await rejects(installArchive({ archive, instanceDir: ctx.inst, signal: never() }), /"\.\.\/evil\.txt"/);
  await untouched(ctx);
  assert.not.ok(await exists(join(ctx.inst, '.update', 'evil.txt')));
});

install('installArchive :: an empty archive is refused', async (ctx) => {
  const archive = join(ctx.dir, 'empty.zip');
  await writeZip(archive, []);
  await rejects(installArchive({ archive, instanceDir: ctx.inst, signal: never() }), /holds no files/);
  await untouched(ctx);
});

install('installArchive :: a cancelled install leaves bin/ untouched', async (ctx) => {
  const archive = join(ctx.dir, 'A.zip');
  await writeZip(archive, sampleBuild('A'));
  const ac = new AbortController();
  // Cancel as extraction starts: the swap must not happen.
  const done = installArchive({
    archive,
    instanceDir: ctx.inst,
    signal: ac.signal,
    onPhase: (p) => p === 'extract' && ac.abort(),
  });
  await rejects(done, /cancelled/);
  await untouched(ctx);
});

install('installArchive :: works on a fresh instance without bin/', async (ctx) => {
  const fresh = join(ctx.dir, 'instances', 'beta');
  const archive = join(ctx.dir, 'A.zip');
  await writeZip(archive, sampleBuild('A'));
  await installArchive({ archive, instanceDir: fresh, signal: never() });
  assert.is(await read(join(fresh, 'bin', 'build.txt')), 'A');
  assert.not.ok(await exists(join(fresh, 'bin.prev')));
});

install.run();

// ---

const rollback = instanceSuite('rollbackBin');

rollback('rollbackBin :: swaps bin.prev back, the current build becomes bin.prev', async (ctx) => {
  const archive = join(ctx.dir, 'A.zip');
  await writeZip(archive, sampleBuild('A'));
  await installArchive({ archive, instanceDir: ctx.inst, signal: never() });
  await rollbackBin(ctx.inst);
  assert.is(await read(join(ctx.inst, 'bin', 'marker')), 'old build');
  assert.is(await read(join(ctx.inst, 'bin.prev', 'build.txt')), 'A');
  await rollbackBin(ctx.inst);
  assert.is(await read(join(ctx.inst, 'bin', 'build.txt')), 'A', 'rolling back twice returns to the newer build');
});

rollback('rollbackBin :: without bin.prev it refuses and leaves bin/', async (ctx) => {
  await rejects(rollbackBin(ctx.inst), /no previous build/);
  await untouched(ctx);
});

rollback.run();

// ---

const recover = instanceSuite('recoverInterruptedInstall');

recover('recoverInterruptedInstall :: a crash between the renames: bin.prev goes back, leftovers go', async (ctx) => {
  const { rename } = await import('node:fs/promises');
  // Simulate: staging extracted, bin renamed to bin.prev, then the daemon died before staging became bin.
  await rename(join(ctx.inst, 'bin'), join(ctx.inst, 'bin.prev'));
  await mkdir(join(ctx.inst, '.update', 'staging-abc123', 'Resources'), { recursive: true });
  await writeFile(join(ctx.inst, '.update', 'staging-abc123', 'build.txt'), 'half');
  await writeFile(join(ctx.inst, '.update', 'download.part'), 'partial');
  await recoverInterruptedInstall(ctx.inst);
  assert.is(await read(join(ctx.inst, 'bin', 'marker')), 'old build');
  assert.not.ok(await exists(join(ctx.inst, 'bin.prev')));
  assert.not.ok(await exists(join(ctx.inst, '.update')));
});

recover('recoverInterruptedInstall :: with bin/ in place it only removes leftovers', async (ctx) => {
  await mkdir(join(ctx.inst, 'bin.prev'));
  await writeFile(join(ctx.inst, 'bin.prev', 'marker'), 'older');
  await mkdir(join(ctx.inst, '.update', 'staging-x'), { recursive: true });
  await recoverInterruptedInstall(ctx.inst);
  await untouched(ctx);
  assert.is(await read(join(ctx.inst, 'bin.prev', 'marker')), 'older');
  assert.not.ok(await exists(join(ctx.inst, '.update')));
  await recoverInterruptedInstall(join(ctx.dir, 'instances', 'never-created'));
});

recover.run();
