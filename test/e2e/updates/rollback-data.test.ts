/**
 * Rollback with data through the real daemon: build A keeps a real SQLite database under data/ (schema 1) and writes
 * rows; build B migrates it to schema 2 on start, which A refuses to run on. `watchdog rollback --with-data` puts A
 * back on the snapshot taken before B was installed, so A reads its rows again and none of B's; `watchdog restore`
 * puts a snapshot back on request; both keep the data they replace as a before-restore snapshot.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain } from '../../_support/cli.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { sql, sqliteUnavailable } from '../../backups/_support/sqlite.ts';
import { startCdn } from '../../fixtures/archives/serve.ts';
import { manifestDoc, writeServerBuild } from '../../fixtures/builds/build.ts';
import { buildStatus, instanceDir, manifestConfig, offerBuild, runningBuild, TOKEN } from '../_support/updates.ts';

const unavailable = sqliteUnavailable();
if (unavailable) console.log(`skipping the rollback-with-data e2e test: ${unavailable}`);
const s = suite('e2e updates :: rollback with data');
const test = unavailable ? s.skip : s;
const KEY = 'db';
/** Each install (download, extraction, the server's start) on a loaded machine: a deadline that only catches a hang. */
const SLOW_MS = 60_000;

/** The game's schema and rows, once it has written at least `rows`. */
const gameWith = (port: number, rows: number) =>
  waitFor(
    `the game on :${port} to have ${rows} rows`,
    async () => {
      const game = (await buildStatus(port).catch(() => null))?.game;
      return game && game.rows >= rows ? game : undefined;
    },
    15_000,
  );

test('rollback with data :: the old build reads its rows again; restore puts a snapshot back', async () => {
  const dir = await tempDir('wd-rollback-data-');
  const cdn = await startCdn();
  let d: RunningDaemon | null = null;
  try {
    const a = await writeServerBuild(join(dir.path, 'A.zip'), 'A', { extra: [{ name: 'schema.txt', content: '1\n' }] });
    cdn.set('/files/A.zip', { kind: 'file', file: a.path });
    const good = { key: 'build-A', time: '2024-05-01T10:00:00Z', url: cdn.url('/files/A.zip'), sha256: a.sha256 };
    cdn.set('/manifest', { kind: 'json', body: manifestDoc([good]) });
    const port = await freePort();
    d = await startDaemon(manifestConfig(KEY, port, cdn.url('/manifest'), 10), { dir: dir.path });
    const daemon = d;
    const cli = async (...args: string[]) => runMain([...args, '--url', daemon.url, '--token', TOKEN], { cwd: ROOT });
    const db = join(instanceDir(daemon, KEY), 'data', 'game.db');

    const onA = await runningBuild(daemon, KEY, port, 'A', { timeoutMs: SLOW_MS });
    const before = await gameWith(port, 20);
    assert.is(before.schema, 1);

    // B migrates the database to schema 2 when it starts.
    const b = await writeServerBuild(join(dir.path, 'B.zip'), 'B', { extra: [{ name: 'schema.txt', content: '2\n' }] });
    await offerBuild(cdn, '/manifest', good, {
      path: b.path,
      key: 'build-B',
      time: '2024-05-02T10:00:00Z',
      route: '/files/B.zip',
    });
    assert.is(await daemon.control(KEY, TOKEN, 'update'), 200);
    const onB = await runningBuild(daemon, KEY, port, 'B', { notPid: onA.status.pid, timeoutMs: SLOW_MS });
    assert.is((await gameWith(port, before.rows + 10)).schema, 2, 'B migrated the database');

    // The snapshot taken before B was installed is the one a rollback with data puts back.
    const listed = await cli('backups', KEY);
    assert.is(listed.code, 0, listed.stderr);
    const line = listed.stdout.split('\n').find((l) => l.includes('← rollback --with-data'));
    assert.ok(line, `a snapshot is marked for the rollback:\n${listed.stdout}`);
    assert.match(line, /before-update\s+build-A → build-B/);
    const snapshot = line.split(' ')[0] ?? '';

    const rolled = await cli('rollback', KEY, '--with-data', '--wait', '--timeout', '60');
    assert.is(rolled.code, 0, `${rolled.stdout}\n${rolled.stderr}`);
    assert.match(rolled.stdout, new RegExp(`rollback of ${KEY} done: running.*on the data of backup ${snapshot}`));
    const backOnA = await runningBuild(daemon, KEY, port, 'A', { notPid: onB.status.pid, timeoutMs: SLOW_MS });
    const game = await gameWith(port, before.rows);
    assert.is(game.schema, 1, 'A runs on the schema it knows');
    assert.is(sql(db, "SELECT count(*) FROM rows WHERE build = 'B';"), '0', "none of B's rows came back");
    assert.is(sql(db, 'PRAGMA integrity_check;'), 'ok');
    const status = await daemon.status(KEY, TOKEN);
    assert.is(status.revision, 'build-A');
    assert.is(status.restore?.ok, true);
    assert.is(status.restore?.rollback, true);
    assert.is(status.restore?.id, snapshot);
    // What it replaced is kept: B's data, as a before-restore snapshot on build B.
    const saved = status.restore?.saved ?? '';
    const list = (await cli('backups', KEY, '--json')).stdout;
    const savedEntry = (JSON.parse(list) as { id: string; kind: string; revision: string }[]).find(
      (e) => e.id === saved,
    );
    assert.equal(savedEntry && { kind: savedEntry.kind, revision: savedEntry.revision }, {
      kind: 'before-restore',
      revision: 'build-B',
    });

    // No snapshot was taken before A was installed (its first install): refused with the reason, nothing done.
    const again = await cli('rollback', KEY, '--with-data');
    assert.is(again.code, 1);
    assert.match(again.stderr, /no snapshot was taken before the installed build was installed/);
    const missing = await cli('restore', KEY, 'no-such-backup');
    assert.is(missing.code, 1);
    assert.match(missing.stderr, /there is no backup no-such-backup/);
    assert.is((await daemon.status(KEY, TOKEN)).pid, backOnA.status.pid, 'the refused requests left the server alone');

    // A restore on request, at the round end (the default policy): B's data back under A would not start, so put the
    // pre-update snapshot back again.
    const from = daemon.log().length;
    const restored = await cli('restore', KEY, snapshot, '--wait', '--timeout', '60');
    assert.is(restored.code, 0, `${restored.stdout}\n${restored.stderr}`);
    assert.match(restored.stdout, new RegExp(`restore of ${KEY} done: running.*on the data of backup ${snapshot}`));
    await runningBuild(daemon, KEY, port, 'A', { notPid: backOnA.status.pid, timeoutMs: SLOW_MS });
    // It waited for the round end: the server was asked to leave (POST /update), not shut down.
    assert.match(daemon.log().slice(from), /build A: update requested/);
    assert.not.match(daemon.log().slice(from), /Backup restore requested by the watchdog/);
    assert.is((await daemon.status(KEY, TOKEN)).restore?.rollback, false);

    // A plain rollback says what --with-data would have done (nothing here) and keeps the data: B migrates it again.
    const plain = await cli('rollback', KEY);
    assert.is(plain.code, 0, plain.stderr);
    assert.match(
      plain.stdout,
      /the data stays as it is \(no snapshot was taken before the installed build was installed\)/,
    );
    await runningBuild(daemon, KEY, port, 'B', { timeoutMs: SLOW_MS });
    assert.is((await gameWith(port, 1)).schema, 2);
  } finally {
    await d?.stop();
    await cdn.close();
    await dir.cleanup();
  }
});

s.run();
