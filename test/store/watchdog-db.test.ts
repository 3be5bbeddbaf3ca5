import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { readWatchdogDb, WatchdogDbError } from '../../src/store/watchdog-db.ts';
import { watchdogDbSuite } from '../_support/watchdog-db-suite.ts';
import { watchdogDbBytes, writeWatchdogDb } from '../fixtures/watchdog-db/build.ts';

const s = watchdogDbSuite('store/watchdog-db', 'wd-db-');

async function rejection(p: Promise<unknown>): Promise<WatchdogDbError> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, WatchdogDbError);
    return err as WatchdogDbError;
  }
  throw new Error('expected a WatchdogDbError');
}

s('watchdog-db :: the current schema (migrations 0001–0004): every column of every row', async ({ file }) => {
  await writeWatchdogDb(file, [
    { Key: 'alpha', Revision: '1.2.3', PersistedToken: 'tok-a', PersistedPid: 4242 },
    { Key: 'beta', Revision: null, PersistedToken: 'tok-b', PersistedSystemdUnit: 'ss14-server-beta.service' },
    { Key: 'gamma' },
  ]);
  const db = await readWatchdogDb(file);
  assert.is(db.file, file);
  assert.equal(db.unfinished, []);
  assert.equal(
    [...db.rows.values()],
    [
      { key: 'alpha', revision: '1.2.3', persistedToken: 'tok-a', persistedPid: 4242, persistedSystemdUnit: null },
      {
        key: 'beta',
        revision: null,
        persistedToken: 'tok-b',
        persistedPid: null,
        persistedSystemdUnit: 'ss14-server-beta.service',
      },
      { key: 'gamma', revision: null, persistedToken: null, persistedPid: null, persistedSystemdUnit: null },
    ],
  );
});

s('watchdog-db :: older schemas: only 0002 (Key, Revision), and 0003 (no systemd unit)', async ({ file }) => {
  await writeWatchdogDb(file, [{ Key: 'alpha', Revision: 'r2' }], 2);
  assert.equal(
    [...(await readWatchdogDb(file)).rows.values()],
    [{ key: 'alpha', revision: 'r2', persistedToken: null, persistedPid: null, persistedSystemdUnit: null }],
  );
  await writeWatchdogDb(file, [{ Key: 'alpha', Revision: 'r3', PersistedToken: 't', PersistedPid: 77 }], 3);
  assert.equal(
    [...(await readWatchdogDb(file)).rows.values()],
    [{ key: 'alpha', revision: 'r3', persistedToken: 't', persistedPid: 77, persistedSystemdUnit: null }],
  );
});

s('watchdog-db :: the file is only read: its bytes and mtime are unchanged', async ({ file }) => {
  await writeWatchdogDb(file, [{ Key: 'alpha', Revision: 'r1', PersistedPid: 1 }]);
  const old = new Date('2020-01-02T03:04:05Z');
  await utimes(file, old, old);
  const before = await readFile(file);
  await readWatchdogDb(file);
  assert.ok(before.equals(await readFile(file)), 'same bytes');
  assert.is((await stat(file)).mtimeMs, old.getTime(), 'same mtime');
});

s('watchdog-db :: a hot journal or WAL file beside it is reported', async ({ file }) => {
  await writeWatchdogDb(file, [{ Key: 'alpha', Revision: 'r1' }]);
  await writeFile(`${file}-journal`, 'x'.repeat(512));
  assert.equal((await readWatchdogDb(file)).unfinished, [`${file}-journal`]);
  await writeFile(`${file}-wal`, 'x'.repeat(512));
  assert.equal((await readWatchdogDb(file)).unfinished, [`${file}-journal`, `${file}-wal`]);
});

s('watchdog-db :: not SQLite → an error naming the file and the problem', async ({ file }) => {
  await writeFile(file, 'this is a text file, not a database\n');
  const err = await rejection(readWatchdogDb(file));
  assert.ok(err.message.includes(file), err.message);
  assert.match(err.message, /is not an SQLite database/);
});

s(
  'watchdog-db :: a damaged file (truncated, overwritten pages) → an error naming the file, with the cause',
  async ({ file }) => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ Key: `k${i}`, Revision: 'r'.repeat(100) }));
    const bytes = await watchdogDbBytes(rows);
    await writeFile(file, bytes.subarray(0, 4096 + 100));
    let err = await rejection(readWatchdogDb(file));
    assert.ok(err.message.includes(file), err.message);
    assert.match(err.message, /is damaged/);
    assert.ok(err.cause instanceof Error, 'carries the cause');

    const mangled = Uint8Array.from(bytes);
    mangled.fill(0x55, 4096, 8192);
    await writeFile(file, mangled);
    err = await rejection(readWatchdogDb(file));
    assert.match(err.message, /is damaged/);
  },
);

s(
  'watchdog-db :: an SQLite file without the ServerInstance table (an empty file too) → an error saying so',
  async ({ file }) => {
    await writeWatchdogDb(file, [], 2);
    const initSqlJs = (await import('sql.js')).default;
    const SQL = await initSqlJs();
    const other = new SQL.Database();
    other.run('CREATE TABLE Something(Id INTEGER)');
    await writeFile(file, other.export());
    other.close();
    let err = await rejection(readWatchdogDb(file));
    assert.ok(err.message.includes(file), err.message);
    assert.match(err.message, /has no ServerInstance table/);
    await writeFile(file, '');
    err = await rejection(readWatchdogDb(file));
    assert.match(err.message, /has no ServerInstance table/);
  },
);

s('watchdog-db :: a missing file → an error naming it', async ({ dir }) => {
  const err = await rejection(readWatchdogDb(join(dir, 'nope.db')));
  assert.match(err.message, /could not read .*nope\.db/);
  assert.ok(err.cause instanceof Error);
});

s.run();
