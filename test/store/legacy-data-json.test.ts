import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import {
  DATA_FILE,
  defaultInstanceData,
  instanceDataKind,
  readInstanceData,
  writeInstanceData,
} from '../../src/store/instance-data.ts';
import { tempSuite } from '../_support/env.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

/** data.json as an older real watchdog wrote it (its InstanceData class: `CurrentRevision` only). */
const s = tempSuite("store/instance-data: the real watchdog's data.json", { prefix: 'wd-legacy-' });

s(
  'legacy :: {"CurrentRevision": …} is read as that revision for the current UpdateType, not set aside',
  async ({ dir }) => {
    await writeFile(join(dir, DATA_FILE), '{"CurrentRevision":"3.14.0"}');
    const log = recordingLogger();
    assert.equal(await readInstanceData(dir, 'Manifest', log), {
      ...defaultInstanceData('Manifest'),
      revision: '3.14.0',
    });
    assert.equal(await readdir(dir), [DATA_FILE], 'nothing set aside');
    assert.equal(
      log.lines.map((l) => l.level),
      ['info'],
    );
    assert.match(log.lines[0]?.msg ?? '', /written by the real watchdog/);
  },
);

s('legacy :: names match case-insensitively; a null revision is a known "none"', async ({ dir }) => {
  await writeFile(join(dir, DATA_FILE), '{\n  "currentRevision": "abc"\n}\n');
  assert.is((await readInstanceData(dir, null, recordingLogger())).revision, 'abc');
  await writeFile(join(dir, DATA_FILE), '{"CurrentRevision":null}');
  assert.equal(await readInstanceData(dir, null, recordingLogger()), defaultInstanceData(null));
  assert.equal(await readdir(dir), [DATA_FILE]);
});

s(
  'legacy :: a CurrentRevision that is not a string, or one beside our version field, is still corrupt',
  async ({ dir }) => {
    await writeFile(join(dir, DATA_FILE), '{"CurrentRevision":42}');
    await readInstanceData(dir, null, recordingLogger());
    assert.is((await readdir(dir)).filter((f) => f.startsWith(`${DATA_FILE}.corrupt-`)).length, 1);
    await writeFile(join(dir, DATA_FILE), '{"version":1,"CurrentRevision":"x"}');
    await readInstanceData(dir, null, recordingLogger());
    assert.is((await readdir(dir)).filter((f) => f.startsWith(`${DATA_FILE}.corrupt-`)).length, 2);
  },
);

s("legacy :: instanceDataKind tells missing, the real watchdog's and ours apart", async ({ dir }) => {
  assert.is(await instanceDataKind(dir), 'missing');
  await writeFile(join(dir, DATA_FILE), '{"CurrentRevision":"1"}');
  assert.is(await instanceDataKind(dir), 'legacy');
  await writeInstanceData(dir, defaultInstanceData('Dummy'));
  assert.is(await instanceDataKind(dir), 'ours');
  await writeFile(join(dir, DATA_FILE), 'garbage');
  assert.is(await instanceDataKind(dir), 'ours', 'a corrupt file is ours to set aside, not an import target');
});

s.run();
