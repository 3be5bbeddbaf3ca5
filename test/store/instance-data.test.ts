import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import {
  DATA_FILE,
  defaultInstanceData,
  type InstanceData,
  readInstanceData,
  writeInstanceData,
} from '../../src/store/instance-data.ts';
import { tempSuite } from '../_support/env.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

const s = tempSuite('store/instance-data', { prefix: 'wd-store-' });

const sample = (revision: string | null, updateType: string | null = 'Manifest'): InstanceData => ({
  version: 1,
  updateType,
  revision,
  previousRevision: null,
  launch: {
    pid: 4242,
    startTime: '123456',
    program: '/srv/bin/Robust.Server',
    args: ['--cvar', 'a=b'],
    secret: 'very-secret-value',
    launchedAt: '2024-05-01T10:00:00.000Z',
  },
  stopped: null,
});

s('data :: missing file → defaults, no warning', async ({ dir }) => {
  const log = recordingLogger();
  assert.equal(await readInstanceData(dir, 'Dummy', log), defaultInstanceData('Dummy'));
  assert.equal(log.lines, []);
});

s('data :: written then read back unchanged, mode 0600, no temporary file left', async ({ dir }) => {
  const data = sample('2024-05-01T09:00:00Z');
  await writeInstanceData(dir, data);
  assert.equal(await readInstanceData(dir, 'Manifest', recordingLogger()), data);
  const st = await stat(join(dir, DATA_FILE));
  if (process.platform !== 'win32') assert.is(st.mode & 0o777, 0o600);
  assert.equal(await readdir(dir), [DATA_FILE]);
});

s('data :: a durable write fsyncs file and folder; durable: false neither', async ({ dir }) => {
  // FileHandle.sync, counted on the prototype every handle shares.
  const probe = await open(dir, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const sync = proto.sync;
  let syncs = 0;
  proto.sync = function (this: unknown) {
    syncs++;
    return sync.call(this);
  };
  try {
    await writeInstanceData(dir, sample('a'));
    assert.is(syncs, 2, 'the temporary file, then the folder after the rename');
    syncs = 0;
    await writeInstanceData(dir, sample('b'), { durable: false });
    assert.is(syncs, 0);
  } finally {
    proto.sync = sync;
  }
  assert.equal(await readInstanceData(dir, 'Manifest', recordingLogger()), sample('b'));
  assert.equal((await readdir(dir)).sort(), [DATA_FILE]);
});

s('data :: a rewrite replaces the file whole (rename, not in-place)', async ({ dir }) => {
  await writeInstanceData(dir, sample('r1'));
  const before = await stat(join(dir, DATA_FILE));
  await writeInstanceData(dir, { ...sample('r2'), launch: null });
  const after = await stat(join(dir, DATA_FILE));
  // A rename swaps in a new inode; an in-place write would keep the old one and could be seen half-written.
  assert.is.not(after.ino, before.ino);
  const parsed: unknown = JSON.parse(await readFile(join(dir, DATA_FILE), 'utf8'));
  assert.equal(parsed, { ...sample('r2'), launch: null });
});

for (const [what, text] of [
  ['garbage', 'this is not json at all {{{'],
  ['truncated', JSON.stringify(sample('r1')).slice(0, 40)],
  ['the wrong shape', JSON.stringify({ version: 1, revision: 7, launch: 'yes' })],
  ['an unknown version', JSON.stringify({ ...sample('r1'), version: 2 })],
  ['empty', ''],
] as const) {
  s(`data :: ${what} → set aside as data.json.corrupt-<time>, warning, defaults`, async ({ dir }) => {
    await writeFile(join(dir, DATA_FILE), text);
    const log = recordingLogger();
    assert.equal(await readInstanceData(dir, 'Dummy', log), defaultInstanceData('Dummy'));
    const files = await readdir(dir);
    assert.is(files.length, 1, files.join(', '));
    assert.match(files[0] ?? '', /^data\.json\.corrupt-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    assert.is(await readFile(join(dir, files[0] ?? ''), 'utf8'), text, 'the original is kept for inspection');
    assert.is(log.lines.filter((l) => l.level === 'warn').length, 1);
  });
}

s('data :: two corrupt files set aside within one millisecond are both kept', async ({ dir }) => {
  // The same clock reading for both set-asides, as on a fast machine.
  const toISOString = Date.prototype.toISOString;
  Date.prototype.toISOString = () => '2026-01-01T00:00:00.000Z';
  try {
    for (const text of ['{', '[']) {
      await writeFile(join(dir, DATA_FILE), text);
      await readInstanceData(dir, 'Dummy', recordingLogger());
    }
  } finally {
    Date.prototype.toISOString = toISOString;
  }
  const aside = `${DATA_FILE}.corrupt-2026-01-01T00-00-00-000Z`;
  assert.equal((await readdir(dir)).sort(), [aside, `${aside}-2`]);
  assert.is(await readFile(join(dir, aside), 'utf8'), '{', 'the first is not overwritten');
  assert.is(await readFile(join(dir, `${aside}-2`), 'utf8'), '[');
});

s('data :: the warning about a corrupt file never carries its secret', async ({ dir }) => {
  await writeFile(join(dir, DATA_FILE), JSON.stringify(sample('r1')).slice(0, -3));
  const log = recordingLogger();
  await readInstanceData(dir, 'Manifest', log);
  assert.not.match(JSON.stringify(log.lines), /very-secret-value/);
});

s('data :: an unreadable data.json (a folder) → defaults with a warning, no throw', async ({ dir }) => {
  await mkdir(join(dir, DATA_FILE));
  const log = recordingLogger();
  assert.equal(await readInstanceData(dir, null, log), defaultInstanceData(null));
  assert.is(log.lines.filter((l) => l.level === 'warn').length, 1);
});

s('data :: a file written before previousRevision existed still reads, with it null', async ({ dir }) => {
  const { previousRevision: _omitted, ...old } = sample('r1');
  await writeFile(join(dir, DATA_FILE), JSON.stringify(old));
  const log = recordingLogger();
  assert.equal(await readInstanceData(dir, 'Manifest', log), sample('r1'));
  assert.equal(log.lines, []);
});

s('data :: a changed UpdateType resets the revision, keeps the launch, logs at info', async ({ dir }) => {
  await writeInstanceData(dir, {
    ...sample('2024-05-01T09:00:00Z', 'Manifest'),
    previousRevision: '2024-04-01T09:00:00Z',
  });
  const log = recordingLogger();
  const data = await readInstanceData(dir, 'Dummy', log);
  assert.is(data.revision, null);
  assert.is(data.previousRevision, null);
  assert.is(data.updateType, 'Dummy');
  assert.equal(data.launch, sample('x').launch);
  assert.equal(
    log.lines.map((l) => l.level),
    ['info'],
  );
  // The same type keeps it.
  assert.is((await readInstanceData(dir, 'Manifest', recordingLogger())).revision, '2024-05-01T09:00:00Z');
});

s('data :: concurrent writes end with the last one, and leave no temporary files', async ({ dir }) => {
  const writes = Array.from({ length: 25 }, (_, i) =>
    writeInstanceData(dir, { ...sample(`r${i}`), launch: i % 2 ? null : sample('x').launch }),
  );
  await Promise.all(writes);
  const data = await readInstanceData(dir, 'Manifest', recordingLogger());
  assert.is(data.revision, 'r24');
  assert.equal(data.launch, sample('x').launch);
  assert.equal(await readdir(dir), [DATA_FILE]);
});

s('data :: a failed write rejects with the path, and later writes still run', async ({ dir }) => {
  const missing = join(dir, 'no-such-folder');
  const err = await writeInstanceData(missing, sample('r1')).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, Error);
  assert.match((err as Error).message, /no-such-folder/);
  await mkdir(missing);
  await writeInstanceData(missing, sample('r2'));
  assert.is((await readInstanceData(missing, 'Manifest', recordingLogger())).revision, 'r2');
});

s.run();
