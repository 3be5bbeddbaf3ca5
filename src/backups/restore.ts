import { mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { extract } from 'tar';
import { describeError } from '../errors.ts';
import { makeDir } from '../make-dir.ts';
import { hashFile } from '../regular-file.ts';
import { syncPath } from '../store/atomic-file.ts';
import { diskSpaceOf, formatBytes } from '../store/disk-space.ts';
import { flushTree } from '../updates/install/flush.ts';
import type { BackupEntry } from './catalog.ts';
import { SNAPSHOT_PATHS } from './collect.ts';
import { BackupError } from './snapshot.ts';

/**
 * Puts a snapshot's data/ and config.toml back (no server runs): unpacked beside data/, checked against the manifest,
 * swapped in by rename (undone if a swap fails). A damaged or foreign archive leaves the instance as it was.
 */
export async function restoreSnapshot(instanceDir: string, entry: BackupEntry, marginBytes: number): Promise<void> {
  const space = await diskSpaceOf(instanceDir).catch(() => null);
  if (space !== null && space.freeBytes < entry.bytes + marginBytes)
    throw new BackupError(
      'space',
      `not enough disk space on ${space.mount} to restore ${entry.id}: needs ${formatBytes(entry.bytes + marginBytes)}, has ${formatBytes(space.freeBytes)}`,
    );
  const staging = await mkdtemp(join(instanceDir, '.restore-'));
  try {
    await unpackVerified(entry, staging);
    // A power loss after the swap must not find data/ pointing at files never written.
    await flushTree(staging, new AbortController().signal);
    await swapIn(instanceDir, staging, entry);
    await syncPath(instanceDir);
  } catch (err) {
    if (err instanceof BackupError) throw err;
    const message = `restoring ${entry.id} failed, the data was left as it was: ${describeError(err)}`;
    throw new BackupError('failed', message, { cause: err });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function unpackVerified(entry: BackupEntry, staging: string): Promise<void> {
  const expected = new Map(entry.files.map((f) => [f.path, f]));
  const unexpected: string[] = [];
  await extract({
    file: entry.archive,
    cwd: staging,
    strict: true,
    // Only what the manifest lists: nothing else is written, links least of all.
    filter: (path, e) => {
      const clean = path.replace(/^\.\//, '').replace(/\/$/, '');
      const type = 'type' in e ? e.type : 'File';
      // Folders only where data lives: a `config.toml/` folder entry would put a folder where the file goes.
      if (type === 'Directory') return clean === 'data' || clean.startsWith('data/');
      const ok = (type === 'File' || type === 'OldFile') && (expected.has(clean) || clean === 'manifest.json');
      if (!ok) unexpected.push(clean);
      return ok;
    },
  });
  if (unexpected.length > 0)
    throw new Error(`${entry.archive} holds entries its manifest does not list: ${unexpected.slice(0, 5).join(', ')}`);
  for (const file of entry.files) {
    const got = await hashFile(join(staging, file.path)).catch(() => null);
    if (got === null) throw new Error(`${entry.archive} lacks ${file.path}, which its manifest lists`);
    if (got.sha256 !== file.sha256 || got.bytes !== file.bytes)
      throw new Error(
        `${file.path} in ${entry.archive} does not match its manifest (SHA-256 or size): the archive is damaged`,
      );
  }
}

/** Swaps each of SNAPSHOT_PATHS the snapshot holds (data/ always: a snapshot of no data restores an empty folder). */
async function swapIn(instanceDir: string, staging: string, entry: BackupEntry): Promise<void> {
  await makeDir(join(staging, 'data'));
  const held = new Set((await readdir(staging)).filter((n) => (SNAPSHOT_PATHS as readonly string[]).includes(n)));
  const swapped: string[] = [];
  try {
    for (const name of held) {
      const live = join(instanceDir, name);
      const aside = join(staging, `${name}.replaced`);
      await rename(live, aside).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      swapped.push(name);
      await rename(join(staging, name), live);
    }
  } catch (err) {
    for (const name of swapped.reverse()) {
      await rm(join(instanceDir, name), { recursive: true, force: true }).catch(() => {});
      await rename(join(staging, `${name}.replaced`), join(instanceDir, name)).catch(() => {});
    }
    throw new Error(`could not put ${entry.id} in place: ${describeError(err)}`, { cause: err });
  }
}

/** After a daemon killed mid-snapshot or mid-restore: a path moved aside and not replaced goes back; leftovers go. */
export async function recoverInterrupted(instanceDir: string, backupsDir: string): Promise<string[]> {
  const back: string[] = [];
  const names = await readdir(instanceDir).catch(() => [] as string[]);
  for (const work of names.filter((n) => n.startsWith('.restore-'))) {
    for (const name of SNAPSHOT_PATHS) {
      const live = join(instanceDir, name);
      const aside = join(instanceDir, work, `${name}.replaced`);
      if ((await exists(aside)) && !(await exists(live))) {
        await rename(aside, live);
        back.push(name);
      }
    }
    await rm(join(instanceDir, work), { recursive: true, force: true });
  }
  for (const name of await readdir(backupsDir).catch(() => [] as string[]))
    if (name.startsWith('.staging-') || /\.(partial|tmp)$/.test(name))
      await rm(join(backupsDir, name), { recursive: true, force: true });
  return back;
}

const exists = async (path: string) => (await stat(path).catch(() => null)) !== null;
