import { entryOf, removeBackup, rewriteManifest } from './catalog.ts';
import type { BackupManifest } from './manifest.ts';

/** The snapshot taken before an install, told how the install ended. */
export interface InstallSnapshot {
  readonly id: string;
  /**
   * A build was swapped in: the manifest names `revision` (the build installed, which may be newer than the one the
   * check found), and from now on the snapshot counts for retention, which runs. Resolves with what it removed.
   */
  installed(revision: string): Promise<string[]>;
  /**
   * Nothing was installed (the install failed, or the build was already there): the snapshot is removed. The data
   * it holds is still in place and the old build runs on it, so no rollback will ask for it.
   */
  notInstalled(): Promise<void>;
}

export interface InstallSnapshotHooks {
  /** The instance's backups folder. */
  dir: string;
  /** Runs `work` in the instance's snapshot queue, the install being over (the snapshot counts for retention now). */
  settle<T>(work: () => Promise<T>): Promise<T>;
  /** Applies `Retention.Backups`; resolves with the ids it removed. */
  applyRetention(): Promise<string[]>;
  /** The snapshot was removed: whoever shows the last snapshot must not name it any more. */
  removed(): void;
}

/** The `InstallSnapshot` of `manifest`, a before-update snapshot just taken. */
export function installSnapshot(manifest: BackupManifest, hooks: InstallSnapshotHooks): InstallSnapshot {
  const { id } = manifest;
  return {
    id,
    installed: (revision) =>
      hooks.settle(async () => {
        if (revision !== manifest.revisionAfter)
          await rewriteManifest(hooks.dir, { ...manifest, revisionAfter: revision });
        return hooks.applyRetention();
      }),
    notInstalled: () =>
      hooks.settle(async () => {
        await removeBackup(entryOf(hooks.dir, manifest));
        hooks.removed();
      }),
  };
}
