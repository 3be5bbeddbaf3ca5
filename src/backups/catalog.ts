import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readRegularFile } from '../regular-file.ts';
import { writeFileAtomic } from '../store/atomic-file.ts';
import { type BackupManifest, isSnapshotId, parseManifest } from './manifest.ts';

export type BackupEntry = BackupManifest & { archive: string };

/** Each `<id>.json` whose `<id>.tar.gz` exists, newest first; an unreadable one goes to `onBad` and is left alone. */
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
      const manifest = parseManifest(await readRegularFile(file, 'utf8'), file);
      if ((await stat(archive).catch(() => null))?.isFile()) out.push({ ...manifest, archive });
    } catch (err) {
      onBad?.(file, err as Error);
    }
  }
  return out.sort((a, b) => (a.takenAt === b.takenAt ? (a.id < b.id ? 1 : -1) : a.takenAt < b.takenAt ? 1 : -1));
}

export function entryOf(backupsDir: string, manifest: BackupManifest): BackupEntry {
  return { ...manifest, archive: join(backupsDir, `${manifest.id}.tar.gz`) };
}

/** The archive first, so a listing never shows one without it. */
export async function removeBackup(entry: BackupEntry): Promise<void> {
  await rm(entry.archive, { force: true });
  await rm(entry.archive.replace(/\.tar\.gz$/, '.json'), { force: true });
}

export async function rewriteManifest(backupsDir: string, manifest: BackupManifest): Promise<void> {
  await writeFileAtomic(join(backupsDir, `${manifest.id}.json`), `${JSON.stringify(manifest, null, 2)}\n`, {
    mode: 0o644,
  });
}
