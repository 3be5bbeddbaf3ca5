import { mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from 'tar';
import { describeError } from '../errors.ts';
import { makeDir } from '../make-dir.ts';
import { clearForWrite } from '../regular-file.ts';
import { syncPath } from '../store/atomic-file.ts';
import { diskFullError, diskSpaceOf, formatBytes } from '../store/disk-space.ts';
import { listBackups, rewriteManifest } from './catalog.ts';
import { collect, listSources, SNAPSHOT_PATHS, type SqliteCopyOptions } from './collect.ts';
import { type BackupKind, type BackupManifest, snapshotId } from './manifest.ts';

/** Why a snapshot was not taken: `space` (too little, or the disk filled) or `failed`. */
export class BackupError extends Error {
  override name = 'BackupError';
  constructor(
    readonly reason: 'space' | 'failed',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface SnapshotRequest {
  instance: string;
  instanceDir: string;
  backupsDir: string;
  kind: BackupKind;
  revision: string | null;
  revisionAfter?: string | null;
  quiet: boolean | (() => boolean);
  sqlite: SqliteCopyOptions;
  marginBytes: number;
  now?: Date;
}

/**
 * Copies data/ and config.toml to a staging folder (databases by the online backup) and archives it under a
 * temporary name renamed to `<id>.tar.gz`, so a snapshot that exists is whole; a failure leaves nothing (BackupError).
 */
export async function takeSnapshot(req: SnapshotRequest): Promise<BackupManifest> {
  await makeDir(req.backupsDir);
  const taken = new Set((await listBackups(req.backupsDir)).map((b) => b.id));
  const id = snapshotId(req.now ?? new Date(), req.revision, taken);
  const staging = await mkdtemp(join(req.backupsDir, '.staging-'));
  const archive = join(req.backupsDir, `${id}.tar.gz`);
  const partial = `${archive}.partial`;
  try {
    const sources = await listSources(req.instanceDir);
    const space = await diskSpaceOf(req.backupsDir).catch(() => null);
    const needs = 2 * sources.bytes + req.marginBytes;
    if (space !== null && space.freeBytes < needs)
      throw new BackupError(
        'space',
        `not enough disk space on ${space.mount} for a snapshot of ${req.instance}: needs ${formatBytes(needs)} ` +
          `(twice its ${formatBytes(sources.bytes)} of data, plus Backups.SpaceMarginMegabytes), has ${formatBytes(space.freeBytes)}`,
      );
    const got = await collect({ ...req, stagingDir: staging, sources });
    const manifest: BackupManifest = {
      format: 1,
      id,
      instance: req.instance,
      kind: req.kind,
      takenAt: (req.now ?? new Date()).toISOString(),
      revision: req.revision,
      revisionAfter: req.revisionAfter ?? null,
      ...got,
      archiveBytes: 0,
    };
    await writeFile(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const members = [
      'manifest.json',
      ...SNAPSHOT_PATHS.filter((p) => got.files.some((f) => f.path === p || f.path.startsWith(`${p}/`))),
    ];
    // The game server can write here: a pipe planted at the partial's name is removed first.
    await clearForWrite(partial);
    await create({ gzip: true, file: partial, cwd: staging, portable: true }, members);
    const done = { ...manifest, archiveBytes: (await stat(partial)).size };
    // On the disk before it counts (an update swaps builds right after); the manifest last, as a listing needs both.
    await syncPath(partial);
    await rename(partial, archive);
    await rewriteManifest(req.backupsDir, done);
    return done;
  } catch (err) {
    await Promise.all([rm(partial, { force: true }), rm(archive, { force: true })]);
    if (err instanceof BackupError) throw err;
    const full = diskFullError(err);
    const message = full
      ? `the disk filled while taking a snapshot of ${req.instance} (${full.code}); nothing was kept`
      : `the snapshot of ${req.instance} failed: ${describeError(err)}`;
    throw new BackupError(full ? 'space' : 'failed', message, { cause: err });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
