import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { createDataDbImport } from '../../src/import/data-db-import.ts';
import { DATA_FILE, defaultInstanceData, readInstanceData, writeInstanceData } from '../../src/store/instance-data.ts';
import { instanceFor } from '../_support/fixture-servers.ts';
import { recordingLogger } from '../_support/recording-logger.ts';
import { watchdogDbSuite } from '../_support/watchdog-db-suite.ts';
import { writeWatchdogDb } from '../fixtures/watchdog-db/build.ts';

/** The import the daemon runs per instance at start (no server processes here: see the e2e and persisted-server). */
const s = watchdogDbSuite('import/data-db-import', 'wd-import-db-');

async function instance(ctx: { dir: string }, key: string) {
  const dir = join(ctx.dir, 'instances', key);
  await mkdir(dir, { recursive: true });
  return { ...instanceFor(dir, join(dir, 'bin/Robust.Server')), key };
}

const readJson = async (dir: string): Promise<unknown> => JSON.parse(await readFile(join(dir, DATA_FILE), 'utf8'));

s('import :: writes data.json with the revision once, logs it, and leaves data.db as it was', async (ctx) => {
  await writeWatchdogDb(ctx.file, [
    { Key: 'alpha', Revision: '9.9.9', PersistedToken: 'tok', PersistedPid: 999_999_999 },
  ]);
  const old = new Date('2021-06-01T00:00:00Z');
  await utimes(ctx.file, old, old);
  const bytes = await readFile(ctx.file);
  const alpha = await instance(ctx, 'alpha');
  const log = recordingLogger();
  const imp = createDataDbImport({ file: ctx.file, persistServers: () => true, log });
  const found = await imp.importInto(alpha, log);
  assert.is(found?.server, 'none');
  assert.equal(await readJson(alpha.dir), {
    version: 1,
    updateType: null,
    revision: '9.9.9',
    previousRevision: null,
    launch: null,
    stopped: null,
  });
  assert.ok(
    log.lines.some((l) =>
      /imported from the real watchdog's data file: revision 9\.9\.9; the persisted pid 999999999 is not adopted: no process has that pid/.test(
        l.msg,
      ),
    ),
    JSON.stringify(log.lines),
  );
  assert.ok(bytes.equals(await readFile(ctx.file)), 'data.db bytes unchanged');
  assert.is((await stat(ctx.file)).mtimeMs, old.getTime(), 'data.db mtime unchanged');
  // Never repeated: data.json is ours now, whatever data.db says later.
  await writeWatchdogDb(ctx.file, [{ Key: 'alpha', Revision: 'changed' }]);
  const again = createDataDbImport({ file: ctx.file, persistServers: () => true, log });
  assert.is(await again.importInto(alpha, log), null);
  assert.is((await readInstanceData(alpha.dir, null, log)).revision, '9.9.9');
});

s(
  "import :: the instance's UpdateType is written; an existing data.json of ours is left alone; the real watchdog's old one is replaced",
  async (ctx) => {
    await writeWatchdogDb(ctx.file, [
      { Key: 'a', Revision: 'ra' },
      { Key: 'b', Revision: 'rb' },
      { Key: 'c', Revision: 'rc' },
    ]);
    const [a, b, c] = [await instance(ctx, 'a'), await instance(ctx, 'b'), await instance(ctx, 'c')];
    a.settings = { ...a.settings, UpdateType: 'Dummy' };
    await writeInstanceData(b.dir, { ...defaultInstanceData(null), revision: 'mine' });
    await writeFile(join(c.dir, DATA_FILE), '{"CurrentRevision":"older"}');
    const log = recordingLogger();
    const imp = createDataDbImport({ file: ctx.file, persistServers: () => false, log });
    for (const i of [a, b, c]) await imp.importInto(i, log);
    assert.equal(await readJson(a.dir), {
      version: 1,
      updateType: 'Dummy',
      revision: 'ra',
      previousRevision: null,
      launch: null,
      stopped: null,
    });
    assert.is((await readInstanceData(b.dir, null, log)).revision, 'mine');
    // The real watchdog stopped writing data.json when it moved to data.db: the row there is the newer one.
    assert.is((await readInstanceData(c.dir, null, log)).revision, 'rc');
  },
);

s('import :: an instance without a row, and no data.db at all: nothing written', async (ctx) => {
  const alpha = await instance(ctx, 'alpha');
  const log = recordingLogger();
  assert.is(await createDataDbImport({ file: ctx.file, persistServers: () => true, log }).importInto(alpha, log), null);
  assert.equal(log.lines, [], 'no data.db: silent');
  await writeWatchdogDb(ctx.file, [{ Key: 'other', Revision: 'x' }]);
  assert.is(await createDataDbImport({ file: ctx.file, persistServers: () => true, log }).importInto(alpha, log), null);
  assert.not.ok(await stat(join(alpha.dir, DATA_FILE)).catch(() => null));
  assert.match(log.lines.map((l) => l.msg).join('\n'), /no entry for this instance/);
});

s('import :: a systemd unit is not adopted, and said so', async (ctx) => {
  await writeWatchdogDb(ctx.file, [
    { Key: 'alpha', Revision: 'r', PersistedToken: 't', PersistedSystemdUnit: 'ss14-alpha.service' },
  ]);
  const alpha = await instance(ctx, 'alpha');
  const log = recordingLogger();
  const found = await createDataDbImport({ file: ctx.file, persistServers: () => true, log }).importInto(alpha, log);
  assert.is(found?.server, 'none');
  const warning = log.lines.find((l) => l.level === 'warn');
  assert.match(warning?.msg ?? '', /systemd unit ss14-alpha\.service, which is not adopted/);
});

s(
  'import :: a broken data.db → one warning naming the file and the problem, nothing written, no throw',
  async (ctx) => {
    await writeFile(ctx.file, 'not a database');
    const [a, b] = [await instance(ctx, 'a'), await instance(ctx, 'b')];
    const log = recordingLogger();
    const imp = createDataDbImport({ file: ctx.file, persistServers: () => true, log });
    assert.equal(await Promise.all([imp.importInto(a, log), imp.importInto(b, log)]), [null, null]);
    const warnings = log.lines.filter((l) => l.level === 'warn');
    assert.is(warnings.length, 1, 'read and reported once, not per instance');
    assert.match(String(warnings[0]?.fields?.problem), /data\.db is not an SQLite database/);
    assert.is(warnings[0]?.fields?.file, ctx.file);
    for (const i of [a, b]) assert.not.ok(await stat(join(i.dir, DATA_FILE)).catch(() => null));
  },
);

s(
  'import :: a journal beside data.db → a warning that the last write may be missed; the import still happens',
  async (ctx) => {
    await writeWatchdogDb(ctx.file, [{ Key: 'alpha', Revision: 'r1' }]);
    await writeFile(`${ctx.file}-journal`, 'x'.repeat(600));
    const alpha = await instance(ctx, 'alpha');
    const log = recordingLogger();
    await createDataDbImport({ file: ctx.file, persistServers: () => true, log }).importInto(alpha, log);
    assert.match(
      log.lines
        .filter((l) => l.level === 'warn')
        .map((l) => l.msg)
        .join('\n'),
      /may miss its last write: stop the real watchdog cleanly/,
    );
    assert.is((await readInstanceData(alpha.dir, null, log)).revision, 'r1');
  },
);

s.run();
