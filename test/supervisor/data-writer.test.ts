import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultInstanceData, writeInstanceData } from '../../src/store/instance-data.ts';
import { createDataWriter } from '../../src/supervisor/instance-start.ts';
import { waitFor } from '../_support/env.ts';
import { recordingLogger } from '../_support/recording-logger.ts';
import { mountSmallFs, tmpfsUnavailable } from '../_support/tmpfs.ts';

const test = suite('supervisor/data-writer');
const NAME =
  'data-writer :: a full disk keeps the previous data.json, never rejects, and the write lands once space is back';
const unavailable = tmpfsUnavailable();

if (unavailable) {
  console.log(`skipped "${NAME}": ${unavailable}`);
  test.skip(NAME, () => undefined);
} else {
  test(NAME, async () => {
    const fs = mountSmallFs(64 * 1024);
    try {
      const dir = fs.path;
      const first = { ...defaultInstanceData(null), revision: 'r1' };
      await writeInstanceData(dir, first);
      const log = recordingLogger();
      const store = createDataWriter(dir, first, log, () => 50);
      fs.fill(0);
      // Resolves although nothing could be written: callers (the machine's actors) never see the failure.
      await store.write({ revision: 'r2' });
      await store.write({ previousRevision: 'r1' });
      const kept = JSON.parse(await readFile(join(dir, 'data.json'), 'utf8')) as { revision: string };
      assert.is(kept.revision, 'r1', 'the previous data.json is whole');
      const errors = log.lines.filter((l) => l.level === 'error');
      assert.is(errors.length, 1, 'told once');
      assert.match(errors[0]?.msg ?? '', /could not write .*data\.json.*the previous data\.json is kept/);
      fs.release();
      await waitFor(
        'the newest data in data.json',
        async () => {
          const now = JSON.parse(await readFile(join(dir, 'data.json'), 'utf8')) as Record<string, unknown>;
          return now.revision === 'r2' && now.previousRevision === 'r1';
        },
        3000,
      );
      assert.ok(log.lines.some((l) => l.level === 'info' && l.msg === 'data.json written again'));
    } finally {
      fs.unmount();
    }
  });
}

test.run();
