import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type BackupManifest, parseManifest } from './manifest.ts';
import { isSnapshotId } from './snapshot-id.ts';

/** One snapshot as a listing shows it: its manifest and where its archive is. */
export interface BackupEntry extends BackupManifest {
  archive: string;
}

/**
 * The snapshots in `backupsDir`, newest first: each `<id>.json` whose `<id>.tar.gz` exists. A manifest that cannot
 * be read is reported through `onBad` and left alone (a person may be looking into it), never deleted here.
 */
export async function listBackups(
  backupsDir: string,
  onBad?: (file: string, err: Error) => void,
): Promise<BackupEntry[]> {
  const names = await readdir(backupsDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const out: BackupEntry[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || !isSnapshotId(name.slice(0, -'.json'.length))) continue;
    const file = join(backupsDir, name);
    const archive = file.replace(/\.json$/, '.tar.gz');
    try {
      const manifest = parseManifest(await readFile(file, 'utf8'), file);
      if ((await stat(archive).catch(() => null))?.isFile()) out.push({ ...manifest, archive });
    } catch (err) {
      onBad?.(file, err as Error);
    }
  }
  return out.sort((a, b) => (a.takenAt === b.takenAt ? (a.id < b.id ? 1 : -1) : a.takenAt < b.takenAt ? 1 : -1));
}

/** Deletes a snapshot: its archive first, so a listing never shows one without it. */
export async function removeBackup(entry: BackupEntry): Promise<void> {
  await rm(entry.archive, { force: true });
  await rm(entry.archive.replace(/\.tar\.gz$/, '.json'), { force: true });
}
