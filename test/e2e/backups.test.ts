/**
 * Backups through the real daemon: a demo server runs while a real `sqlite3` process keeps writing a database under
 * its data/; `Backups.Schedule` takes snapshots every second, retention keeps the newest four, a scheduled snapshot
 * restores to a database that passes integrity_check with rows in it, and `watchdog backup` / `watchdog backups`
 * take and list them over HTTP; after a daemon restart the status and `/metrics` show the newest snapshot on disk.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listBackups } from '../../src/backups/catalog.ts';
import { restoreSnapshot } from '../../src/backups/restore.ts';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { metricValue } from '../_support/metric-value.ts';
import { sql, sqliteUnavailable, startWriter } from '../backups/_support/sqlite.ts';

const unavailable = sqliteUnavailable();
if (unavailable) console.log(`skipping the backup e2e test: ${unavailable}`);
const s = suite('e2e :: backups');
const test = unavailable ? s.skip : s;
const KEY = 'bk';
const TOKEN = 'tok';

interface BackupStatus {
  ok: boolean;
  kind: string;
  id: string | null;
}

test('backups :: scheduled snapshots of a database being written, retention, restore, CLI', async () => {
  const dir = await tempDir('wd-backups-e2e-');
  const inst = join(dir.path, 'instances', KEY);
  await mkdir(join(inst, 'data'), { recursive: true });
  const writer = startWriter(join(inst, 'data', 'game.db'), { maxRows: 50_000, everyMs: 5 });
  const yaml = testConfig({
    instances: [
      {
        key: KEY,
        port: await freePort(),
        extra: [
          '      Backups:',
          "        Schedule: '* * * * * *'",
          '      Retention:',
          '        Backups: { Keep: 4, KeepDays: 0 }',
        ].join('\n'),
      },
    ],
  });
  let d: RunningDaemon | null = null;
  const target = await mkdtemp(join(tmpdir(), 'wd-backups-restore-'));
  try {
    d = await startDaemon(yaml, { dir: dir.path });
    const daemon = d;
    // Five scheduled snapshots seen in the status (one a second); retention keeps four of all kinds.
    const seen = new Set<string>();
    await waitFor(
      'five scheduled snapshots',
      async () => {
        const backup = ((await daemon.status(KEY, TOKEN)) as unknown as { backup: BackupStatus | null }).backup;
        assert.ok(backup === null || backup.ok, `a snapshot failed: ${JSON.stringify(backup)}`);
        if (backup?.id && backup.kind === 'scheduled') seen.add(backup.id);
        return seen.size >= 5 ? true : undefined;
      },
      30_000,
    );
    const archives = async () => (await readdir(join(inst, 'backups'))).filter((n) => n.endsWith('.tar.gz'));
    await waitFor('retention to keep four', async () => ((await archives()).length === 4 ? true : undefined), 10_000);

    const [newest] = await listBackups(join(inst, 'backups'));
    assert.ok(newest, 'a snapshot is listed');
    assert.is(newest.kind, 'scheduled');
    assert.equal(
      newest.files.filter((f) => f.sqlite).map((f) => f.path),
      ['data/game.db'],
    );
    await restoreSnapshot(target, newest, 0);
    const restored = join(target, 'data', 'game.db');
    assert.is(sql(restored, 'PRAGMA integrity_check;'), 'ok');
    const rows = Number(sql(restored, 'SELECT count(*) FROM rows;'));
    assert.ok(
      rows > 0 && rows <= Number(sql(join(inst, 'data', 'game.db'), 'SELECT count(*) FROM rows;')),
      `${rows} rows`,
    );

    // The schedule goes by a reload before the manual snapshot: on a slow machine, scheduled ones taken while it is
    // read back would push it out of the newest four.
    const settings = join(dir.path, 'appsettings.yml');
    const unscheduled = (await readFile(settings, 'utf8')).replace(/Backups:\n *Schedule: .*\n/, 'Backups: {}\n');
    assert.not.match(unscheduled, /Schedule/);
    await writeFile(settings, unscheduled);
    const reloadFrom = daemon.log().length;
    daemon.proc.kill('SIGHUP');
    await waitFor('the reload', () => /configuration reloaded/.test(daemon.log().slice(reloadFrom)), 10_000);

    // The rows written before a snapshot are all in it, in a row (no gap: one consistent copy).
    const before = Number(sql(join(inst, 'data', 'game.db'), 'SELECT count(*) FROM rows;'));
    const took = await runMain(['backup', KEY, '--url', daemon.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(took.code, 0, took.stderr);
    assert.match(took.stdout, new RegExp(`^backup of ${KEY} taken: \\d{8}T\\d{6}Z\\S* .* manual`));
    const manual = (await listBackups(join(inst, 'backups'))).find((b) => b.kind === 'manual');
    assert.ok(manual, 'the manual snapshot is there');
    const second = await mkdtemp(join(tmpdir(), 'wd-backups-restore-'));
    try {
      await restoreSnapshot(second, manual, 0);
      const db = join(second, 'data', 'game.db');
      const [count, max] = sql(db, 'SELECT count(*), max(n) FROM rows;').split('|').map(Number);
      assert.ok((count ?? 0) >= before, `${count} rows restored, ${before} written before the snapshot`);
      assert.is(max, count, 'rows 1 to n, none missing');
      assert.is(sql(db, 'PRAGMA integrity_check;'), 'ok');
    } finally {
      await rm(second, { recursive: true, force: true });
    }
    const list = await runMain(['backups', KEY, '--json', '--url', daemon.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout) as Array<{ kind: string; files: number }>;
    assert.ok(listed.length >= 1 && listed.length <= 5, `retention bounds the list: ${listed.length}`);
    assert.ok(
      listed.some((b) => b.kind === 'manual'),
      'the manual snapshot is listed',
    );
    assert.match(daemon.log(), /backup taken/);
    const ok = (await metricValue(daemon.url, 'watchdog_backups_total', { instance: KEY, result: 'ok' })) ?? 0;
    assert.ok(ok >= 4, `watchdog_backups_total ok: ${ok}`);
    assert.is(await metricValue(daemon.url, 'watchdog_backups_total', { instance: KEY, result: 'failed' }), 0);
    assert.ok(((await metricValue(daemon.url, 'watchdog_backup_last_size_bytes', { instance: KEY })) ?? 0) > 0);

    // A daemon restart (no schedule now): the status and /metrics show the newest snapshot on disk at once.
    await daemon.stop();
    d = null;
    const [last] = await listBackups(join(inst, 'backups'));
    assert.ok(last, 'a snapshot is on disk');
    d = await startDaemon(testConfig({ instances: [{ key: KEY, port: await freePort() }] }), { dir: dir.path });
    const again = d;
    await waitFor(
      'the status to show the snapshot on disk',
      async () => {
        const backup = ((await again.status(KEY, TOKEN)) as unknown as { backup: BackupStatus | null }).backup;
        return backup?.id === last.id ? true : undefined;
      },
      10_000,
    );
    const gauge = (name: string) => metricValue(again.url, name, { instance: KEY });
    assert.is(await gauge('watchdog_backup_last_success_timestamp_seconds'), Date.parse(last.takenAt) / 1000);
    assert.is(await gauge('watchdog_backup_last_size_bytes'), last.archiveBytes);
    // Found, not taken: the counter counts this daemon's snapshots.
    assert.is(await metricValue(again.url, 'watchdog_backups_total', { instance: KEY, result: 'ok' }), 0);
  } finally {
    await writer.stop();
    if (d) await d.stop();
    await rm(target, { recursive: true, force: true });
    await dir.cleanup();
  }
});

s.run();
