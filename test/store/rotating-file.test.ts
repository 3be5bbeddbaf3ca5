import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RotatingFile } from '../../src/store/rotating-file.ts';
import { tempDir, waitFor } from '../_support/env.ts';
import { onSmallDisk } from '../_support/tmpfs.ts';

const rot = suite('store/rotating-file');

rot('rotating-file :: rotates by size and keeps `keep` files, the newest lines whole in the current one', async () => {
  const tmp = await tempDir('wd-rotfile-');
  try {
    const file = join(tmp.path, 'logs', 'audit.log');
    const f = new RotatingFile(file, { maxBytes: 300, keep: 3 });
    for (let i = 0; i < 200; i++) f.append(JSON.stringify({ i }));
    const names = (await readdir(join(tmp.path, 'logs'))).sort();
    assert.equal(names, ['audit.log', 'audit.log.1', 'audit.log.2']);
    for (const n of names) assert.ok((await stat(join(tmp.path, 'logs', n))).size <= 300);
    assert.match(await readFile(file, 'utf8'), /\{"i":199\}\n$/);
  } finally {
    await tmp.cleanup();
  }
});

const FULL = 'rotating-file :: a full disk drops and counts lines; writing resumes once space is back';
onSmallDisk(rot, FULL, 64 * 1024, async (fs) => {
  const file = join(fs.path, 'audit.log');
  const told: string[] = [];
  const f = new RotatingFile(
    file,
    { maxBytes: 1024 * 1024, keep: 2 },
    {
      retryMs: 20,
      health: { onFailing: (code) => told.push(code), onResumed: (n) => told.push(`resumed ${n}`) },
    },
  );
  fs.fill(0);
  for (let i = 0; i < 2000; i++) f.append('z'.repeat(200));
  // The last attempt on the disk set the next one at its time + retryMs; that time is before this one.
  const lastTried = Date.now();
  assert.equal(told, ['ENOSPC']);
  assert.ok(f.dropped > 0);
  fs.release();
  // The clock the writer reads is what must move on (a timer's delay counts from the loop's cached time).
  await waitFor('the retry interval to pass', () => Date.now() >= lastTried + 20, 5000, 5);
  f.append('back');
  assert.match(told.at(-1) ?? '', /^resumed \d+$/);
  assert.match(await readFile(file, 'utf8'), /back\n$/);
});

rot.run();
