import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { flushFiles, flushTree } from '../../../src/updates/install/flush.ts';
import { tempSuite } from '../../_support/env.ts';

const flush = tempSuite('install :: flushTree', { prefix: 'wd-flush-' });

/** Puts a dangling link and a FIFO in `folder`, which flushing must pass over. */
async function linkAndFifo(dir: string, folder: string): Promise<void> {
  await symlink(join(dir, 'missing'), join(folder, 'dangling'));
  // Opening a FIFO for reading blocks until a writer comes: a build holding one must not hang the install.
  execFileSync('mkfifo', [join(folder, 'fifo')]);
}

/** Runs `sync` over `dir`; rejects when it has not ended within 5 s, which means it opened the FIFO. */
async function syncWithoutHanging(sync: typeof flushTree, dir: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${sync.name} hung (it opened the FIFO)`)), 5000);
  });
  try {
    await Promise.race([sync(dir, new AbortController().signal), hung]);
  } finally {
    clearTimeout(timer);
  }
}

flush(
  'flush :: syncs nested files and folders; links (even dangling) and FIFOs are passed over, never opened',
  async ({ dir }) => {
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    await writeFile(join(dir, 'a', 'b', 'file'), 'x'.repeat(100_000));
    await writeFile(join(dir, 'top'), 'y');
    await linkAndFifo(dir, join(dir, 'a'));
    await syncWithoutHanging(flushTree, dir);
  },
);

flush('flush :: the file-by-file fallback passes over links and FIFOs too, and syncs the rest', async ({ dir }) => {
  await mkdir(join(dir, 'a'), { recursive: true });
  await writeFile(join(dir, 'a', 'file'), 'z'.repeat(50_000));
  await linkAndFifo(dir, join(dir, 'a'));
  await syncWithoutHanging(flushFiles, dir);
});

flush('flush :: a folder that is gone is an error (sync -f fails, the fallback names the folder)', async ({ dir }) => {
  const gone = join(dir, 'never-made');
  const err = await flushTree(gone, new AbortController().signal).then(
    () => null,
    (e: NodeJS.ErrnoException) => e,
  );
  assert.ok(err, 'flushTree resolved for a folder that does not exist');
  assert.is(err?.code, 'ENOENT');
  assert.ok(err?.message.includes('never-made'), err?.message);
});

flush.run();
