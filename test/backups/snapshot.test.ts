/**
 * Snapshots of an instance's data: a real SQLite database written by a real `sqlite3` process while the snapshot is
 * taken comes back whole (integrity_check ok, every row committed before it began); the manifest's hashes hold; a
 * restore swaps data/ and config.toml and a damaged archive leaves them alone.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listBackups } from '../../src/backups/catalog.ts';
import { restoreSnapshot } from '../../src/backups/restore.ts';
import { BackupError, type SnapshotRequest, takeSnapshot } from '../../src/backups/snapshot.ts';
import { waitFor, within } from '../_support/env.ts';
import { sql, sqliteUnavailable, startWriter } from './_support/sqlite.ts';

const unavailable = sqliteUnavailable();
if (unavailable) console.log(`skipping the snapshot tests: ${unavailable}`);

const s = suite<{ dir: string }>('backups', { dir: '' });
const test = unavailable ? s.skip : s;

s.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'wd-backup-'));
  await mkdir(join(ctx.dir, 'data', 'replays'), { recursive: true });
  await writeFile(join(ctx.dir, 'config.toml'), '[net]\nport = 1212\n');
  await writeFile(join(ctx.dir, 'data', 'replays', 'round-1.zip'), 'replay bytes');
});
s.after.each(async (ctx) => {
  await rm(ctx.dir, { recursive: true, force: true });
});

const request = (dir: string, over: Partial<SnapshotRequest> = {}): SnapshotRequest => ({
  instance: 'alpha',
  instanceDir: dir,
  backupsDir: join(dir, 'backups'),
  kind: 'manual',
  revision: 'rev-1',
  quiet: false,
  sqlite: { program: 'sqlite3', timeoutMs: 60_000 },
  marginBytes: 0,
  ...over,
});

test('snapshot :: a database being written comes back whole with every row committed before it', async ({ dir }) => {
  const db = join(dir, 'data', 'preferences.db');
  const writer = startWriter(db, { maxRows: 5_000, everyMs: 2 });
  try {
    const count = () => Number(sql(db, 'SELECT count(*) FROM rows;'));
    await waitFor('the writer to write 100 rows', () => count() >= 100, 10_000);
    const before = count();
    const manifest = await takeSnapshot(request(dir));
    // Still writing: the snapshot neither stopped nor locked out the writer (on a loaded machine it may not have
    // got a row in during the snapshot itself, so the next one is waited for).
    const after = await waitFor('the writer to write on', () => (count() > before ? count() : 0), 10_000);
    assert.equal(manifest.files.find((f) => f.path === 'data/preferences.db')?.sqlite, true);
    assert.not.ok(
      manifest.files.some((f) => f.path.endsWith('-wal') || f.path.endsWith('-shm')),
      'no sidecars',
    );

    const [entry] = await listBackups(join(dir, 'backups'));
    assert.ok(entry, 'the snapshot is listed');
    const target = await mkdtemp(join(tmpdir(), 'wd-restore-'));
    try {
      await restoreSnapshot(target, entry, 0);
      const restored = join(target, 'data', 'preferences.db');
      assert.is(sql(restored, 'PRAGMA integrity_check;'), 'ok');
      const rows = Number(sql(restored, 'SELECT count(*) FROM rows;'));
      assert.ok(
        rows >= before && rows <= after,
        `restored ${rows} rows; ${before} before the snapshot, ${after} after`,
      );
      assert.is(await readFile(join(target, 'data', 'replays', 'round-1.zip'), 'utf8'), 'replay bytes');
      assert.is(await readFile(join(target, 'config.toml'), 'utf8'), '[net]\nport = 1212\n');
    } finally {
      await rm(target, { recursive: true, force: true });
    }
  } finally {
    await writer.stop();
  }
});

test('snapshot :: the manifest lists sizes and hashes, names the revisions and skips links', async ({ dir }) => {
  await symlink('/etc/passwd', join(dir, 'data', 'outside'));
  const m = await takeSnapshot(request(dir, { kind: 'before-update', revisionAfter: 'rev-2' }));
  assert.match(m.id, /^\d{8}T\d{6}Z-rev-1$/);
  assert.is(m.revisionAfter, 'rev-2');
  assert.equal(
    m.files.map((f) => [f.path, f.bytes]),
    [
      ['config.toml', 18],
      ['data/replays/round-1.zip', 12],
    ],
  );
  assert.equal(m.skipped, [{ path: 'data/outside', reason: 'a symbolic link' }]);
  assert.equal((await readdir(join(dir, 'backups'))).sort(), [`${m.id}.json`, `${m.id}.tar.gz`]);
});

test('snapshot :: two in one second keep both', async ({ dir }) => {
  const now = new Date('2026-11-28T03:00:00Z');
  const a = await takeSnapshot(request(dir, { now }));
  const b = await takeSnapshot(request(dir, { now }));
  assert.is.not(a.id, b.id);
  assert.is((await listBackups(join(dir, 'backups'))).length, 2);
});

test('snapshot :: named pipes planted in backups/ are neither read nor written through', async ({ dir }) => {
  if (spawnSync('mkfifo', ['--version']).error !== undefined) return console.log('  (skipped: no mkfifo)');
  const now = new Date('2026-11-28T03:00:00Z');
  const backups = join(dir, 'backups');
  const a = await takeSnapshot(request(dir, { now }));
  // The game server can write here: a pipe as a manifest, and at the names the next snapshot's partials take.
  const pipes = [`${a.id}.json`, `${a.id}.json.partial`, `${a.id}.tar.gz.partial`].map((n) => join(backups, n));
  await rm(pipes[0]!);
  for (const p of pipes) spawnSync('mkfifo', [p]);
  try {
    const bad: string[] = [];
    const listed = await within(
      10_000,
      'the listing',
      listBackups(backups, (file, err) => bad.push(`${file}: ${err.message}`)),
    );
    assert.equal(listed, []);
    assert.match(bad.join('\n'), `${pipes[0]} is not a regular file`);
    const b = await within(10_000, 'the next snapshot', takeSnapshot(request(dir, { now })));
    assert.equal(
      (await listBackups(backups)).map((e) => e.id),
      [b.id],
    );
  } finally {
    // A pipe opened anyway holds a thread until someone opens its other end.
    for (const p of pipes)
      if ((await stat(p).catch(() => null))?.isFIFO()) closeSync(openSync(p, constants.O_RDWR | constants.O_NONBLOCK));
  }
});

test('snapshot :: too little space is refused before anything is written', async ({ dir }) => {
  const err = await takeSnapshot(request(dir, { marginBytes: Number.MAX_SAFE_INTEGER })).catch((e: unknown) => e);
  assert.instance(err, BackupError);
  assert.is((err as BackupError).reason, 'space');
  assert.match((err as Error).message, /not enough disk space .* for a snapshot of alpha/);
  assert.equal(await readdir(join(dir, 'backups')), []);
});

test('restore :: a damaged archive leaves data/ and config.toml as they were', async ({ dir }) => {
  await takeSnapshot(request(dir));
  const [entry] = await listBackups(join(dir, 'backups'));
  assert.ok(entry);
  await writeFile(join(dir, 'data', 'replays', 'round-1.zip'), 'changed since');
  const manifest = { ...entry, files: entry.files.map((f) => ({ ...f, sha256: '0'.repeat(64) })) };
  const err = await restoreSnapshot(dir, manifest, 0).catch((e: unknown) => e);
  assert.instance(err, BackupError);
  assert.match((err as Error).message, /does not match its manifest/);
  assert.is(await readFile(join(dir, 'data', 'replays', 'round-1.zip'), 'utf8'), 'changed since');
  assert.not.ok(
    (await readdir(dir)).some((n) => n.startsWith('.restore-')),
    'no staging left',
  );
});

s.run();
