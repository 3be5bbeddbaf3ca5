/**
 * Putting data back (src/backups/instance-backups.ts replaceData, src/backups/restore.ts): a rollback whose build
 * swap fails leaves the data as it was even when a snapshot taken meanwhile would expire its copy; an archive with
 * entries its manifest does not list changes nothing; and what a killed daemon left moved aside comes back.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createInstanceBackups } from '../../src/backups/instance-backups.ts';
import { recoverInterrupted, restoreSnapshot } from '../../src/backups/restore.ts';
import { BackupsSchema, RetentionSchema } from '../../src/config/sections/backups.ts';

const test = suite<{ dir: string }>('backups restore', { dir: '' });

test.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'wd-restore-'));
  await mkdir(join(ctx.dir, 'data'), { recursive: true });
});
test.after.each(async (ctx) => {
  await rm(ctx.dir, { recursive: true, force: true });
});

const save = (dir: string) => readFile(join(dir, 'data', 'save.txt'), 'utf8');
const write = (dir: string, text: string) => writeFile(join(dir, 'data', 'save.txt'), text);

function backupsOf(dir: string, retention: unknown) {
  let t = Date.parse('2026-11-01T00:00:00Z');
  return createInstanceBackups({
    key: 'alpha',
    instanceDir: dir,
    settings: () => ({ backups: v.parse(BackupsSchema, {}), retention: v.parse(RetentionSchema, retention) }),
    reports: { taken: () => {}, found: () => {}, afterCommand: () => {}, unreadable: () => {} },
    now: () => {
      t += 60_000;
      return t;
    },
  });
}

test('backups restore :: a failed build swap puts the replaced data back, even past retention meanwhile', async (ctx) => {
  const b = backupsOf(ctx.dir, { Backups: { Keep: 1, KeepDays: 0 } });
  await write(ctx.dir, 'v1');
  const old = await b.take({ kind: 'before-update', revision: 'r1', revisionAfter: 'r2', quiet: true });
  await write(ctx.dir, 'v2');
  const entry = (await b.find(old.id))!;
  const failed = await b
    .replaceData(entry, 'r2', async () => {
      assert.is(await save(ctx.dir), 'v1', 'the old data is in place while the build goes back');
      // A snapshot taken meanwhile: with Keep 1 its retention would remove the copy of v2, which is still needed.
      await b.take({ kind: 'manual', revision: 'r2', quiet: true });
      throw new Error('no bin.prev');
    })
    .then(
      () => null,
      (err: unknown) => err as Error,
    );
  assert.match(failed?.message ?? '', 'no bin.prev');
  assert.is(await save(ctx.dir), 'v2', 'the data it replaced is back');
  await b.close();
});

test('backups restore :: an archive with an entry its manifest does not list, or a folder for config.toml, changes nothing', async (ctx) => {
  const b = backupsOf(ctx.dir, {});
  await write(ctx.dir, 'v1');
  await writeFile(join(ctx.dir, 'config.toml'), 'x = 1\n');
  const snap = await b.take({ kind: 'manual', revision: 'r1', quiet: true });
  const entry = (await b.find(snap.id))!;
  await b.close();
  await write(ctx.dir, 'v2');
  const { create } = await import('tar');
  const forge = async (name: string, members: string[]) => {
    const root = join(ctx.dir, `forge-${name}`);
    await mkdir(join(root, 'data'), { recursive: true });
    await writeFile(join(root, 'data', 'save.txt'), 'v1');
    await writeFile(join(root, 'config.toml'), 'x = 1\n');
    await writeFile(join(root, 'data', 'extra.sh'), 'evil');
    await mkdir(join(root, 'config.toml.d'), { recursive: true });
    const archive = join(ctx.dir, `${name}.tar.gz`);
    await create({ gzip: true, file: archive, cwd: root, portable: true }, members);
    return { ...entry, archive };
  };
  for (const forged of [
    await forge('extra', ['data/save.txt', 'config.toml', 'data/extra.sh']),
    await forge('folder', ['data/save.txt', 'config.toml.d']),
  ]) {
    const err = await restoreSnapshot(ctx.dir, forged, 0).then(
      () => null,
      (e: unknown) => e as Error,
    );
    assert.ok(err, `${forged.archive} is refused`);
    assert.is(await save(ctx.dir), 'v2', 'the data is as it was');
    assert.is(await readFile(join(ctx.dir, 'config.toml'), 'utf8'), 'x = 1\n');
  }
  assert.equal(
    (await readdir(ctx.dir)).filter((n) => n.startsWith('.restore-')),
    [],
    'no work folder left',
  );
});

test('backups restore :: what a killed daemon left moved aside comes back, and its leftovers go', async (ctx) => {
  // Killed between the two renames: data/ moved aside, the snapshot's not yet in place.
  const work = join(ctx.dir, '.restore-abc');
  await mkdir(join(work, 'data.replaced'), { recursive: true });
  await writeFile(join(work, 'data.replaced', 'save.txt'), 'live');
  await rm(join(ctx.dir, 'data'), { recursive: true });
  const backups = join(ctx.dir, 'backups');
  await mkdir(join(backups, '.staging-1'), { recursive: true });
  await writeFile(join(backups, 'x.tar.gz.partial'), '');
  await writeFile(join(backups, '.x.json.1.1.tmp'), '');
  await writeFile(join(backups, 'kept.json'), '{}');
  assert.equal(await recoverInterrupted(ctx.dir, backups), ['data']);
  assert.is(await save(ctx.dir), 'live');
  assert.equal((await readdir(ctx.dir)).sort(), ['backups', 'data']);
  assert.equal(await readdir(backups), ['kept.json']);
});

test.run();
